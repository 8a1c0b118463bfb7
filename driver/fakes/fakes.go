// Package fakes holds in-memory stand-ins for every driver of interp, for tests of the
// interpreter and the CLI. They take time only through the time package (so tests under
// testing/synctest see exact timings) and record every call.
package fakes

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// World is a fake target: all drivers at once, sharing one call log.
type World struct {
	mu    sync.Mutex
	calls []string

	// CRDSchemas are the openAPIV3Schemas of custom resources' CRDs, by kind
	// (schema.ObjectSchemas).
	CRDSchemas map[string]map[string]any
	// CRDSchemaErrs are the errors reading a kind's CRD gives (forbidden), by kind.
	CRDSchemaErrs map[string]error
	// Listed are the objects a get of a kind in a namespace, by neither name nor selector,
	// lists, by "<kind> <namespace>" (objects the cluster holds already).
	Listed map[string][]any

	// Stats returns the snapshot for a source on its n-th read (0-based). Nil: empty stats.
	Stats func(source string, n int) schema.StatsSnapshot
	reads map[string]int

	// Load returns a load's result; it takes LoadTime (or the load's duration), or until ctx ends.
	LoadResult func(req schema.Load) schema.LoadResult
	LoadTime   time.Duration

	// ExecResult returns an exec's result.
	ExecResult func(req schema.Exec) schema.ExecResult
	// StepTime is how long every cluster call takes.
	StepTime time.Duration
	// FailOn makes calls whose description contains the string fail.
	FailOn string
	// Existing objects are not reported as created by apply.
	Existing map[string]bool
	// Missing are the names of objects the fake cluster does not have: Delete reports them
	// absent (*schema.AbsentError).
	Missing []string
	// Marker, when set, is a file the fake appends every mutation to (for tests of the real
	// binary, which cannot share memory with the test).
	Marker string
	// Lines are the log lines Logs returns.
	Lines []schema.LogLine
	// Records are the DNS records set, by host.
	Records map[string][]string

	// ConfigValue returns a config step's value on its n-th read (0-based) of the same
	// resource, or an error. Nil: a fixed cluster.
	ConfigValue func(req schema.Config, n int) (any, error)
	// ConfigResource, when set, is the resource a config step's n-th read read, before its
	// path (what the drivers return beside a path that selects nothing in it).
	ConfigResource func(req schema.Config, n int) any
	configReads    map[string]int

	// Unknown are kinds the fake API server does not serve until an apply of a CRD defines them.
	Unknown map[string]bool
	served  map[string]bool

	// Exited, when set, says whether the named process has ended by itself, and how.
	Exited func(name string) (string, bool)

	// KeepObjects makes the fake API server keep the objects applied (inline ones), their
	// quantities canonical as the API server returns them (cpu "0.5" as 500m), and a wait's
	// match or absent judge them with Match (the kube driver's matcher: kube.PartialMatches),
	// polling until the step's time ends; without it (or Match) such a wait holds at once.
	KeepObjects bool
	Match       func(want, got any, anyOrder bool) bool
	kept        map[string]map[string]any

	// Ready are the ready pods a selector matches, by selector: a snapshot, config, exec or
	// load by that selector uses the first (a snapshot records it as its pod, namespace
	// "lab" when the step names none) and tells the step which it used among them
	// (schema.NotePodPick), as the kube driver does.
	Ready map[string][]string
}

// FromEnv is the world of the fake target (--target fake, of the CLI scripts and of the binary
// built with -tags labrun_fakes), set up from the environment getenv reads: LABRUN_FAKE_MARKER
// (Marker), LABRUN_FAKE_STEP_TIME (StepTime, a duration), LABRUN_FAKE_FAIL_ON (FailOn),
// LABRUN_FAKE_MISSING (Missing, space-separated), LABRUN_FAKE_OBJECTS=1 (KeepObjects; the caller
// sets Match) and LABRUN_FAKE_READY (Ready of one selector:
// "app=backend:backend-a,backend-b"). Both read them here: the scripts' world alone read
// LABRUN_FAKE_READY, and the binary's ran every step by selector as if it matched no pod.
func FromEnv(getenv func(string) string) *World {
	w := &World{
		Marker:  getenv("LABRUN_FAKE_MARKER"),
		FailOn:  getenv("LABRUN_FAKE_FAIL_ON"),
		Missing: strings.Fields(getenv("LABRUN_FAKE_MISSING")),
	}
	w.StepTime, _ = time.ParseDuration(getenv("LABRUN_FAKE_STEP_TIME"))
	w.KeepObjects = getenv("LABRUN_FAKE_OBJECTS") == "1"
	if sel, pods, ok := strings.Cut(getenv("LABRUN_FAKE_READY"), ":"); ok {
		w.Ready = map[string][]string{sel: strings.Split(pods, ",")}
	}
	return w
}

// pick is the pod a step by ref uses when Ready lists its selector's pods, told to the step;
// "" otherwise.
func (w *World) pick(ctx context.Context, ref *schema.PodRef, n int) string {
	if ref == nil || ref.Selector == "" || len(w.Ready[ref.Selector]) == 0 {
		return ""
	}
	ns := ref.Namespace
	if ns == "" {
		ns = "lab"
	}
	ready := slices.Sorted(slices.Values(w.Ready[ref.Selector]))
	schema.NotePodPick(ctx, schema.PodPick{Namespace: ns, Selector: ref.Selector, Used: ready[:min(max(n, 1), len(ready))], Ready: ready})
	return ns + "/" + ready[0]
}

// Target returns the fake as an schema.Target.
func (w *World) Target() *schema.Target {
	return &schema.Target{
		Name: "fake", Describe: "in-memory fakes",
		Cluster: w, Exec: w, Load: w, Stats: w, Logs: w, DNS: w, Processes: w,
		Values: map[string]any{"clusterDomain": "cluster.local"},
		Close:  func(context.Context) error { w.log("close"); return nil },
	}
}

// Calls returns the calls made so far, in order.
func (w *World) Calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.calls...)
}

func (w *World) log(format string, args ...any) error {
	c := fmt.Sprintf(format, args...)
	w.mu.Lock()
	w.calls = append(w.calls, c)
	marker := w.Marker
	w.mu.Unlock()
	if marker != "" {
		if f, err := os.OpenFile(marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, c)
			f.Close()
		}
	}
	if w.FailOn != "" && strings.Contains(c, w.FailOn) {
		return fmt.Errorf("fake failure on %q", c)
	}
	return nil
}

func (w *World) take(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func refOf(o schema.Object, ns string) schema.ObjectRef {
	r := schema.ObjectRef{}
	r.APIVersion, _ = o["apiVersion"].(string)
	r.Kind, _ = o["kind"].(string)
	if md, ok := o["metadata"].(map[string]any); ok {
		r.Name, _ = md["name"].(string)
		if n, _ := md["namespace"].(string); n != "" {
			ns = n
		}
	}
	if r.Kind != "Namespace" && !strings.HasPrefix(r.Kind, "Cluster") && r.Kind != "CustomResourceDefinition" {
		r.Namespace = ns
	}
	return r
}

// Objects implements schema.Cluster. Objects of Unknown kinds not yet defined by an applied
// CRD (nor by one of the same batch) are an *schema.UnknownKindsError.
func (w *World) Objects(_ context.Context, objs []schema.Object, files []string, ns string) ([]schema.ObjectRef, error) {
	var out []schema.ObjectRef
	var unknown []schema.GroupKind
	var errs []string
	batch := crdKinds(objs)
	w.mu.Lock()
	for _, o := range objs {
		r := refOf(o, ns)
		if w.Unknown[r.Kind] && !w.served[r.Kind] && !batch[r.Kind] {
			group, _, _ := strings.Cut(r.APIVersion, "/")
			unknown = append(unknown, schema.GroupKind{Group: group, Kind: r.Kind})
			errs = append(errs, fmt.Sprintf("%s %s: the fake API server serves no kind %s", r.Kind, r.Name, r.Kind))
		}
		out = append(out, r)
	}
	w.mu.Unlock()
	if len(unknown) > 0 {
		return nil, &schema.UnknownKindsError{Kinds: unknown, Err: fmt.Errorf("%s", strings.Join(errs, "\n"))}
	}
	for _, f := range files {
		out = append(out, schema.ObjectRef{Kind: "File", Namespace: ns, Name: f})
	}
	return out, nil
}

// Apply implements schema.Cluster.
func (w *World) Apply(ctx context.Context, objs []schema.Object, files []string, ns string) (schema.ApplyResult, error) {
	refs, _ := w.Objects(ctx, objs, files, ns)
	var res schema.ApplyResult
	if w.KeepObjects {
		w.keep(objs, ns)
	}
	for _, r := range refs {
		if err := w.log("apply %s %s/%s", r.Kind, r.Namespace, r.Name); err != nil {
			return res, err
		}
		res.Applied = append(res.Applied, r)
		if !w.Existing[r.Kind+"/"+r.Namespace+"/"+r.Name] {
			res.Created = append(res.Created, r)
		}
	}
	return res, w.take(ctx, w.StepTime)
}

// ApplyWith implements schema.Cluster: mode "apply" is Apply; "create" of an Existing object
// fails; "patch" and "replace" create nothing. An applied CRD makes its kind served.
func (w *World) ApplyWith(ctx context.Context, objs []schema.Object, files []string, ns string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	if _, err := w.Objects(ctx, objs, files, ns); err != nil {
		return schema.ApplyResult{}, err
	}
	w.mu.Lock()
	for k := range crdKinds(objs) {
		if w.served == nil {
			w.served = map[string]bool{}
		}
		w.served[k] = true
	}
	w.mu.Unlock()
	if opts.Mode == "" || opts.Mode == "apply" && opts.Subresource == "" {
		return w.Apply(ctx, objs, files, ns)
	}
	refs, _ := w.Objects(ctx, objs, files, ns)
	var res schema.ApplyResult
	op := opts.Mode
	if opts.Subresource != "" {
		op += " " + opts.Subresource
	}
	for _, r := range refs {
		if err := w.log("%s %s %s/%s", op, r.Kind, r.Namespace, r.Name); err != nil {
			return res, err
		}
		exists := w.Existing[r.Kind+"/"+r.Namespace+"/"+r.Name]
		if opts.Mode == "create" {
			if exists {
				return res, fmt.Errorf("create %s %s/%s: it exists already", r.Kind, r.Namespace, r.Name)
			}
			res.Created = append(res.Created, r)
		}
		res.Applied = append(res.Applied, r)
	}
	return res, w.take(ctx, w.StepTime)
}

// crdKinds are the kinds the CRDs among objs define.
func crdKinds(objs []schema.Object) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if o["kind"] != "CustomResourceDefinition" {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		if k, _ := names["kind"].(string); k != "" {
			out[k] = true
		}
	}
	return out
}

// DefinedKinds implements schema.Cluster.
func (w *World) DefinedKinds(_ context.Context, objs []schema.Object, _ []string) ([]schema.GroupKind, error) {
	var out []schema.GroupKind
	for _, o := range objs {
		if o["kind"] != "CustomResourceDefinition" {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		if k, _ := names["kind"].(string); k != "" {
			out = append(out, schema.GroupKind{Group: group, Kind: k})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out, nil
}

// WaitObjects implements schema.Cluster. With KeepObjects and Match it polls the objects
// kept (of the kind, in the namespace, by name if the partial object has one) until one
// matches, or with Absent none does, or ctx ends; with Once it judges once.
func (w *World) WaitObjects(ctx context.Context, ns string, ow schema.ObjectWait, _ time.Duration) error {
	r := refOf(ow.Want, ns)
	op := "match"
	if ow.Absent {
		op = "absent"
	}
	if ow.Once && (!w.KeepObjects || w.Match == nil) {
		return nil // judged (and logged) by the wait that polled
	}
	if !ow.Once {
		if err := w.log("wait %s %s %s/%s", op, r.Kind, r.Namespace, r.Name); err != nil {
			return err
		}
		if err := w.take(ctx, w.StepTime); err != nil || !w.KeepObjects || w.Match == nil {
			return err
		}
	}
	want := jsonCopy(map[string]any(ow.Want))
	for {
		var matching []string
		w.mu.Lock()
		for key, o := range w.kept {
			k := refOf(o, "")
			if k.Kind == r.Kind && strings.HasPrefix(key, r.Kind+"/"+r.Namespace+"/") && (r.Name == "" || k.Name == r.Name) && w.Match(want, o, ow.AnyOrder) {
				matching = append(matching, k.Name)
			}
		}
		w.mu.Unlock()
		if (len(matching) == 0) == ow.Absent {
			return nil
		}
		if ow.Once {
			return &schema.Unmet{Err: fmt.Errorf("wait %s %s: not now", op, r.Kind)}
		}
		if err := w.take(ctx, 20*time.Millisecond); err != nil {
			if ow.Absent {
				sort.Strings(matching)
				return fmt.Errorf("%s: still there: %s", err, strings.Join(matching, ", "))
			}
			return fmt.Errorf("%s: no %s matches", err, r.Kind)
		}
	}
}

// keep keeps the objects applied, as the API server would return them (quantities canonical).
func (w *World) keep(objs []schema.Object, ns string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kept == nil {
		w.kept = map[string]map[string]any{}
	}
	for _, o := range objs {
		r := refOf(o, ns)
		c := jsonCopy(map[string]any(o))
		if sh, _ := kubeshape.Builtin(r.APIVersion, r.Kind); sh != nil {
			c, _ = sh.Canonical(c).(map[string]any)
		}
		w.kept[r.Kind+"/"+r.Namespace+"/"+r.Name] = c
	}
}

// jsonCopy is o through JSON (numbers float64), a copy of it.
func jsonCopy(o map[string]any) map[string]any {
	b, err := json.Marshal(o)
	if err != nil {
		return o
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return o
	}
	return out
}

// Delete implements schema.Cluster.
func (w *World) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	var absent []schema.ObjectRef
	for _, r := range refs {
		if slices.Contains(w.Missing, r.Name) {
			absent = append(absent, r)
			continue
		}
		if err := w.log("delete %s %s/%s", r.Kind, r.Namespace, r.Name); err != nil {
			return err
		}
	}
	if err := w.take(ctx, w.StepTime); err != nil {
		return err
	}
	if len(absent) > 0 {
		return &schema.AbsentError{Absent: absent, All: len(absent) == len(refs)}
	}
	return nil
}

// Owned implements schema.Cluster: in the fake world every object is the run's.
func (w *World) Owned(ctx context.Context, refs []schema.ObjectRef) ([]schema.ObjectRef, error) {
	return refs, nil
}

// Scale implements schema.Cluster.
func (w *World) Scale(ctx context.Context, ns, d string, n int, wait bool) error {
	if err := w.log("scale %s/%s %d", ns, d, n); err != nil {
		return err
	}
	return w.take(ctx, w.StepTime)
}

// Restart implements schema.Cluster.
func (w *World) Restart(ctx context.Context, ns, d string, wait bool) error {
	if err := w.log("restart %s/%s", ns, d); err != nil {
		return err
	}
	return w.take(ctx, w.StepTime)
}

// KillPods implements schema.Cluster.
func (w *World) KillPods(ctx context.Context, req schema.Kill) ([]string, error) {
	if err := w.log("kill %s/%s%s", req.Namespace, req.Pod, req.Selector); err != nil {
		return nil, err
	}
	return []string{"pod-1"}, w.take(ctx, w.StepTime)
}

// WaitRollout implements schema.Cluster.
func (w *World) WaitRollout(ctx context.Context, ns, d string) error {
	if err := w.log("rollout %s/%s", ns, d); err != nil {
		return err
	}
	return w.take(ctx, w.StepTime)
}

// WaitCondition implements schema.Cluster.
func (w *World) WaitCondition(ctx context.Context, ns string, c schema.Condition, _ time.Duration) error {
	if err := w.log("condition %s %s/%s%s %s", c.Kind, ns, c.Name, c.Selector, c.Type); err != nil {
		return err
	}
	return w.take(ctx, w.StepTime)
}

// Get implements schema.Cluster: a pod's IP is 10.0.0.<n> on the n-th get; an object of
// Missing is not found (schema.ErrNotFound).
func (w *World) Get(ctx context.Context, req schema.Get) (any, error) {
	if err := w.log("get %s %s/%s%s %s", req.Kind, req.Namespace, req.Name, req.Selector, req.Path); err != nil {
		return nil, err
	}
	if req.Name != "" && slices.Contains(w.Missing, req.Name) {
		return nil, fmt.Errorf("%s %s: %w", req.Kind, req.Name, schema.ErrNotFound)
	}
	w.mu.Lock()
	n := len(w.calls)
	w.mu.Unlock()
	if l, ok := w.Listed[req.Kind+" "+req.Namespace]; ok && req.Name == "" && req.Selector == "" {
		return l, nil
	}
	if req.Path != "" {
		return fmt.Sprintf("10.0.0.%d", n), nil
	}
	return map[string]any{"kind": req.Kind, "metadata": map[string]any{"name": req.Name}}, nil
}

// DryRun implements schema.Cluster.
func (w *World) DryRun(ctx context.Context, objs []schema.Object, files []string, ns string) error {
	if _, err := w.Objects(ctx, objs, files, ns); err != nil {
		return err
	}
	return w.log("dry-run %d objects", len(objs)+len(files))
}

// Exec implements schema.Executor.
func (w *World) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	if err := w.log("exec %s", strings.Join(req.Argv, " ")); err != nil {
		return schema.ExecResult{}, err
	}
	if err := w.take(ctx, w.StepTime); err != nil {
		return schema.ExecResult{}, err
	}
	w.pick(ctx, &schema.PodRef{Selector: req.Selector, Namespace: req.Namespace}, 1)
	if w.ExecResult != nil {
		return w.ExecResult(req), nil
	}
	return schema.ExecResult{Stdout: strings.Join(req.Argv, " ") + "\n"}, nil
}

// Load implements schema.LoadGenerator.
func (w *World) Load(ctx context.Context, req schema.Load) (schema.LoadResponse, error) {
	if err := w.log("load %s", req.URL); err != nil {
		return schema.LoadResponse{}, err
	}
	d := w.LoadTime
	if d == 0 {
		d = req.Duration.D()
	}
	start := time.Now()
	err := w.take(ctx, d)
	if err != nil {
		d = time.Since(start) // stopped: it ran until then, as fortio says of a load it stopped
	}
	if req.From != nil {
		w.pick(ctx, &req.From.PodRef, req.From.Pods)
	}
	n := float64(req.Requests)
	if n == 0 {
		// A duration load: the requests it sent in the time it ran (d, less when stopped), at
		// its qps, else one per connection every 10 ms. It recorded none, and an interrupted
		// one read "partial: 0 requests" though it had run.
		rate := req.QPS
		if rate <= 0 {
			rate = 100 * float64(max(req.Connections, 1))
		}
		n = math.Floor(rate * d.Seconds())
	}
	res := schema.LoadResult{Requests: n, Codes: map[string]float64{"200": n}, OK: n}
	if w.LoadResult != nil {
		res = w.LoadResult(req)
	}
	timed(&res, d, req.Connections)
	w.log("load ended")
	return schema.LoadResponse{LoadResult: res, Raw: []byte(`{"fake":true}`)}, err
}

// timed gives res, a load of requests that took d over connections, the duration, qps and
// latencies fortio records of such a load (those left 0): its calls, each as long as the
// others, kept its connections busy for d (1 ms when it took no time). A record that holds a
// load of requests with no duration or no latency is one no run made (see
// schema.LoadResult.Contradictions).
func timed(res *schema.LoadResult, d time.Duration, connections int) {
	if res.Requests <= 0 {
		return
	}
	if res.DurationS == 0 {
		res.DurationS = max(d, time.Millisecond).Seconds()
	}
	if res.QPS == 0 && len(res.Pods) == 0 {
		res.QPS = res.Requests / res.DurationS
	}
	if res.Connections == 0 {
		res.Connections = float64(max(connections, 1))
	}
	if res.Avg == 0 && res.Max == 0 {
		ms := res.DurationS * 1000
		lat := min(ms*res.Connections/res.Requests, ms)
		res.Min, res.P50, res.P90, res.P99, res.P999, res.Max, res.Avg = lat, lat, lat, lat, lat, lat, lat
	}
}

// Snapshot implements schema.StatsReader.
func (w *World) Snapshot(ctx context.Context, req schema.Snapshot) (schema.StatsSnapshot, error) {
	src := req.Source()
	if err := w.log("snapshot %s", src); err != nil {
		return schema.StatsSnapshot{}, err
	}
	w.mu.Lock()
	if w.reads == nil {
		w.reads = map[string]int{}
	}
	n := w.reads[src]
	w.reads[src]++
	w.mu.Unlock()
	if err := w.take(ctx, w.StepTime); err != nil {
		return schema.StatsSnapshot{}, err
	}
	pod := w.pick(ctx, req.Envoy, 1)
	if w.Stats == nil {
		return schema.StatsSnapshot{Source: src, Counters: schema.Stats{}, Gauges: schema.Stats{}, Pod: pod}, nil
	}
	s := w.Stats(src, n)
	s.Source = src
	if s.Pod == "" {
		s.Pod = pod
	}
	s.Artifacts = append(s.Artifacts, schema.Artifact{Name: "stats.txt", Data: []byte(statsText(s))})
	return s, nil
}

func statsText(s schema.StatsSnapshot) string {
	var lines []string
	for k, v := range s.Counters {
		lines = append(lines, fmt.Sprintf("%s: %g", k, v))
	}
	for k, v := range s.Gauges {
		lines = append(lines, fmt.Sprintf("%s: %g", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// Config implements schema.StatsReader.
func (w *World) Config(ctx context.Context, req schema.Config) (schema.ConfigResult, error) {
	if err := w.log("config %s", req.Cluster); err != nil {
		return schema.ConfigResult{}, err
	}
	w.pick(ctx, req.Envoy, 1)
	if w.ConfigValue != nil {
		key := req.Cluster + "\x00" + req.Listener + "\x00" + req.Route + "\x00" + req.Names + "\x00" + req.Path
		w.mu.Lock()
		if w.configReads == nil {
			w.configReads = map[string]int{}
		}
		n := w.configReads[key]
		w.configReads[key]++
		w.mu.Unlock()
		v, err := w.ConfigValue(req, n)
		res := schema.ConfigResult{Value: v}
		if w.ConfigResource != nil {
			res.Resource = w.ConfigResource(req, n)
		}
		return res, err
	}
	return schema.ConfigResult{Value: map[string]any{"name": req.Cluster, "connect_timeout": "10s"}}, nil
}

// Logs implements schema.LogReader.
func (w *World) Logs(ctx context.Context, req schema.Logs, from schema.LogSince, line func(schema.LogLine)) error {
	since := from.Time
	if err := w.log("logs %s", req.PodRef.String()); err != nil {
		return err
	}
	if from.Sources != nil {
		// The pods read: those the lines name (a kube read by selector reads every pod).
		var pods []string
		for _, l := range w.Lines {
			if l.Pod != "" && !slices.Contains(pods, l.Pod) {
				pods = append(pods, l.Pod)
			}
		}
		if len(pods) > 0 {
			slices.Sort(pods)
			from.Sources(pods)
		}
	}
	for _, l := range w.Lines {
		if !l.Time.Before(since) {
			line(l)
		}
	}
	return nil
}

// SetRecords implements schema.DNSWriter.
func (w *World) SetRecords(ctx context.Context, req schema.DNS) error {
	if err := w.log("dns %s %s", req.Host, strings.Join(req.Addresses, ",")); err != nil {
		return err
	}
	w.mu.Lock()
	if w.Records == nil {
		w.Records = map[string][]string{}
	}
	w.Records[req.Host] = req.Addresses
	w.mu.Unlock()
	return w.take(ctx, w.StepTime)
}

// Start implements schema.ProcessRunner.
func (w *World) Start(ctx context.Context, name string, req schema.Process) (schema.RunningProcess, error) {
	if err := w.log("start %s", name); err != nil {
		return nil, err
	}
	return &process{w: w, name: name}, nil
}

type process struct {
	w    *World
	name string
}

func (p *process) Stop(ctx context.Context, sig string) error {
	return p.w.log("stop %s %s", p.name, sig)
}

// Ended: a fake process runs until it is stopped, or until the world says it ended (Exited).
func (p *process) Ended() (string, bool) {
	if p.w.Exited != nil {
		return p.w.Exited(p.name)
	}
	return "", false
}

// ObjectSchema implements schema.ObjectSchemas from CRDSchemas, or CRDSchemaErrs' error for
// a kind whose CRD the cluster would not let be read.
func (w *World) ObjectSchema(ctx context.Context, kind, apiVersion string) (string, map[string]any, error) {
	if err := w.CRDSchemaErrs[kind]; err != nil {
		return kind, nil, err
	}
	return kind, w.CRDSchemas[kind], nil
}
