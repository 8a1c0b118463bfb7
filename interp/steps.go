package interp

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// stepKind is one entry of the step registry.
type stepKind struct {
	// usage is a one-line description, shown by `labrun help steps` and in errors.
	usage string
	// driver names the Target field the kind needs ("" for none); a nil driver refuses the
	// scenario before it runs.
	driver string
	run    func(ru *run, ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error
}

// kinds is the step registry: every kind the schema has, and how it runs. Its CUE definition
// is schema/steps.cue; its parameters are the schema package's Go type of the same name.
var kinds = map[string]stepKind{
	"apply":    {"create or update Kubernetes objects by server-side apply", "Cluster", (*run).apply},
	"delete":   {"delete Kubernetes objects", "Cluster", (*run).delete},
	"scale":    {"set a Deployment's replicas and wait for the rollout", "Cluster", (*run).scale},
	"restart":  {"rollout restart a Deployment and wait for it", "Cluster", (*run).restart},
	"kill":     {"delete pods by selector, or stop a local process", "", (*run).kill},
	"wait":     {"wait for a rollout, a condition or an expression", "", (*run).wait},
	"get":      {"capture a Kubernetes object or field", "Cluster", (*run).get},
	"exec":     {"run a command in a pod or on this machine and capture its output", "Exec", (*run).exec},
	"load":     {"generate HTTP load with fortio and record its results", "Load", (*run).load},
	"snapshot": {"record the stats of an Envoy cluster, a Prometheus endpoint or a local backend", "Stats", (*run).snapshot},
	"config":   {"record part of an Envoy config_dump", "Stats", (*run).config},
	"logs":     {"record log lines since a mark, parsing access logs", "Logs", (*run).logs},
	"dns":      {"set the records of one host name in the lab DNS server", "DNS", (*run).dns},
	"assert":   {"check an expression now", "", (*run).assert},
	"sleep":    {"wait for a duration", "", (*run).sleep},
	"process":  {"start a local command in the background", "Processes", (*run).process},
	// Blocks run through the scheduler itself (see dispatch).
	"parallel": {"run steps at the same time, each at its offset", "", nil},
	"sequence": {"run steps one after another", "", nil},
	"repeat":   {"run steps until an expression holds", "", nil},
	"await":    {"join background steps", "", nil},
}

// KindUsage returns the registry's usage lines, sorted by kind.
func KindUsage() []string {
	var out []string
	for _, k := range dsl.Kinds {
		out = append(out, fmt.Sprintf("%-9s %s", k, kinds[k].usage))
	}
	return out
}

// resolve evaluates a step's ${...} into its parameters.
func (ru *run) resolve(s *dsl.Step) (any, error) {
	if !s.HasTemplates() {
		return s.Params, nil
	}
	ru.mu.Lock()
	env := ru.judge.Env()
	ru.mu.Unlock()
	return s.Resolve(env)
}

// dispatch runs a step with its resolved parameters.
func (ru *run) dispatch(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	switch s.Kind {
	case "parallel":
		return ru.parallel(ctx, s)
	case "sequence":
		return ru.sequence(ctx, s.Children)
	case "repeat":
		return ru.repeat(ctx, s, sr)
	case "await":
		return ru.await(ctx, s)
	}
	k, ok := kinds[s.Kind]
	if !ok || k.run == nil {
		return fmt.Errorf("no step kind %q", s.Kind)
	}
	if err := ru.guard(ctx, s, params); err != nil {
		return err
	}
	return k.run(ru, ctx, s, sr, params)
}

// namespace picks a step's namespace: its own, else the scenario's first.
func (ru *run) namespace(ns string) string {
	if ns != "" {
		return ns
	}
	if len(ru.sc.Namespaces) > 0 {
		return ru.sc.Namespaces[0]
	}
	return ""
}

func (ru *run) apply(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Apply)
	res, err := ru.target.Cluster.Apply(ctx, p.Objects, ru.files(p.Files), ru.namespace(p.Namespace))
	for _, ref := range res.Created {
		ref := ref
		ru.created1(fmt.Sprintf("%s %s", ref.Kind, qualified(ref)), func(ctx context.Context) error {
			return ru.target.Cluster.Delete(ctx, []ObjectRef{ref}, true)
		})
	}
	return err
}

func qualified(r ObjectRef) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// files resolves step file paths against the scenario's directory.
func (ru *run) files(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		if !strings.HasPrefix(f, "/") && ru.sc.Dir != "" {
			f = ru.sc.Dir + "/" + f
		}
		out[i] = f
	}
	return out
}

func (ru *run) delete(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Delete)
	refs, err := ru.target.Cluster.Objects(ctx, p.Objects, ru.files(p.Files), ru.namespace(p.Namespace))
	if err != nil {
		return err
	}
	return ru.target.Cluster.Delete(ctx, refs, schema.Bool(p.Wait, true))
}

func (ru *run) scale(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Scale)
	return ru.target.Cluster.Scale(ctx, ru.namespace(p.Namespace), p.Deployment, p.Replicas, schema.Bool(p.Wait, true))
}

func (ru *run) restart(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Restart)
	return ru.target.Cluster.Restart(ctx, ru.namespace(p.Namespace), p.Deployment, schema.Bool(p.Wait, true))
}

func (ru *run) kill(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Kill)
	if p.Process != "" {
		ru.mu.Lock()
		proc := ru.procs[p.Process]
		ru.mu.Unlock()
		if proc == nil {
			return fmt.Errorf("no running process %q: its process step has not run", p.Process)
		}
		return proc.Stop(ctx, or(p.Signal, "TERM"))
	}
	if ru.target.Cluster == nil {
		return fmt.Errorf("kill of pods needs the kube target (this run's target is %s)", ru.target.Name)
	}
	q := *p
	q.Namespace = ru.namespace(p.Namespace)
	killed, err := ru.target.Cluster.KillPods(ctx, q)
	if err == nil && len(killed) == 0 {
		ru.mu.Lock()
		sr.Warnings = append(sr.Warnings, "no pod matched")
		ru.mu.Unlock()
	}
	return err
}

// podRef returns a copy of r with its namespace defaulted (nil stays nil).
func (ru *run) podRef(r *schema.PodRef) *schema.PodRef {
	if r == nil {
		return nil
	}
	c := *r
	c.Namespace = ru.namespace(c.Namespace)
	return &c
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (ru *run) wait(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := params.(*schema.Wait)
	switch {
	case p.Until != "":
		return ru.waitUntil(ctx, s.Expr, s.Interval)
	case ru.target.Cluster == nil:
		return fmt.Errorf("wait for a rollout or condition needs the kube target (this run's target is %s)", ru.target.Name)
	case p.Rollout != "":
		return ru.target.Cluster.WaitRollout(ctx, ru.namespace(p.Namespace), p.Rollout)
	default:
		interval := s.Interval
		if interval == 0 {
			interval = 500 * time.Millisecond
		}
		return ru.target.Cluster.WaitCondition(ctx, ru.namespace(p.Namespace), *p.Condition, interval)
	}
}

func (ru *run) get(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Get)
	p.Namespace = ru.namespace(p.Namespace)
	v, err := ru.target.Cluster.Get(ctx, p)
	if err != nil {
		return err
	}
	ru.setValue(s, v)
	return nil
}

func (ru *run) setValue(s *dsl.Step, v any) {
	if s.Name == "" {
		return
	}
	ru.mu.Lock()
	ru.rec.Values[s.Name] = v
	ru.mu.Unlock()
}

func (ru *run) exec(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Exec)
	if p.Pod != "" || p.Selector != "" {
		p.Namespace = ru.namespace(p.Namespace)
	}
	res, err := ru.target.Exec.Exec(ctx, p)
	if err != nil {
		return err
	}
	if p.Capture != "" {
		re, err := regexp.Compile(p.Capture)
		if err != nil {
			return fmt.Errorf("capture: %v", err)
		}
		if m := re.FindStringSubmatch(res.Stdout); m != nil {
			res.Captured = map[string]string{}
			for i, n := range re.SubexpNames() {
				if n != "" {
					res.Captured[n] = m[i]
				}
			}
		}
	}
	ru.artifact(s, "stdout.txt", []byte(res.Stdout))
	if res.Stderr != "" {
		ru.artifact(s, "stderr.txt", []byte(res.Stderr))
	}
	if s.Name != "" {
		ru.mu.Lock()
		ru.rec.Execs[s.Name] = res
		ru.mu.Unlock()
	}
	if int(res.Exit) != p.ExitCode {
		tail := strings.TrimSpace(res.Stderr)
		tail = dsl.TruncateStart(tail, 401)
		return fmt.Errorf("%s exited with code %d, expected %d; stderr: %s", strings.Join(p.Argv, " "), int(res.Exit), p.ExitCode, or(tail, "(empty)"))
	}
	return nil
}

// artifact keeps a raw input of a step.
func (ru *run) artifact(s *dsl.Step, name string, data []byte) {
	ru.mu.Lock()
	ru.rec.Artifacts = append(ru.rec.Artifacts, &ArtifactRecord{Step: or(s.Name, s.Path), Name: name, Data: data})
	ru.mu.Unlock()
}

func (ru *run) load(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Load)
	p.From = ru.podRef(p.From)
	start := ru.clock.Now()
	meter := &LoadMeter{Planned: int64(p.Requests), Start: start}
	meter.PlannedDuration = p.Duration.D()
	ru.observe(Event{Step: sr, Load: meter})
	res, err := ru.target.Load.Load(WithLoadMeter(ctx, meter), p)
	if len(res.Raw) > 0 {
		ru.artifact(s, "fortio.json", res.Raw)
	}
	if codes := meter.CodesJSON(); codes != nil {
		ru.artifact(s, "codes-over-time.json", codes)
	}
	if err != nil {
		return err
	}
	ru.mu.Lock()
	sr.Warnings = append(sr.Warnings, res.Warnings...)
	if s.Name != "" {
		ru.rec.Loads[s.Name] = &LoadRecord{LoadResult: res.LoadResult, Warnings: res.Warnings, Start: start, End: ru.clock.Now()}
	}
	ru.mu.Unlock()
	return nil
}

func (ru *run) snapshot(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Snapshot)
	p.Envoy = ru.podRef(p.Envoy)
	at := ru.clock.Now()
	snap, err := ru.target.Stats.Snapshot(ctx, p)
	name := or(s.Name, s.Path)
	// Artifacts first: a failed snapshot's (the full text of an error) matter most.
	for _, a := range snap.Artifacts {
		n := a.Name
		if s.Every > 0 {
			n = fmt.Sprintf("%04d-%s", sr.Sample, a.Name)
		}
		ru.artifact(s, n, a.Data)
	}
	if err != nil {
		return err
	}
	rec := &SnapshotRecord{Name: name, Source: p.Source(), At: at, Counters: nonNil(snap.Counters),
		Gauges: nonNil(snap.Gauges), Histograms: snap.Histograms, Hosts: snap.Hosts}
	if s.Every > 0 {
		ru.observe(Event{Step: sr, Sample: rec})
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if s.Every > 0 {
		ser := ru.rec.Series[name]
		if ser == nil {
			ser = &SeriesRecord{Name: name, Source: rec.Source, Every: s.Every}
			ru.rec.Series[name] = ser
		}
		ser.Samples = append(ser.Samples, rec)
		return nil
	}
	if s.Name != "" {
		ru.rec.Snapshots[s.Name] = rec
	}
	return nil
}

func nonNil(s dsl.Stats) dsl.Stats {
	if s == nil {
		return dsl.Stats{}
	}
	return s
}

func (ru *run) config(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Config)
	p.Envoy = ru.podRef(p.Envoy)
	res, err := ru.target.Stats.Config(ctx, p)
	for _, a := range res.Artifacts {
		ru.artifact(s, a.Name, a.Data)
	}
	if err != nil {
		return err
	}
	ru.setValue(s, res.Value)
	return nil
}

func (ru *run) logs(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Logs)
	if p.Process == "" && p.File == "" {
		p.Namespace = ru.namespace(p.Namespace)
		if p.Container == "" {
			p.Container = "istio-proxy"
		}
	} else if p.File != "" {
		p.File = ru.files([]string{p.File})[0]
	}
	since := ru.rec.Start
	if p.Since != "" {
		st := ru.steps[p.Since]
		select {
		case <-st.started:
			since = st.start
		default:
			return fmt.Errorf("logs since %q: that step has not started", p.Since)
		}
	}
	lines, err := ru.target.Logs.Logs(ctx, p, since)
	if err != nil {
		return err
	}
	res := ParseLogs(lines, p.Match, p.Capture, ru.accessLog)
	var raw strings.Builder
	for _, l := range lines {
		raw.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " " + l.Text + "\n")
	}
	ru.artifact(s, "logs.txt", []byte(raw.String()))
	if s.Name != "" {
		ru.mu.Lock()
		ru.rec.Logs[s.Name] = res
		ru.mu.Unlock()
	}
	return nil
}

func (ru *run) accessLog(line string) (dsl.LogEntry, bool) {
	if ru.parseAccessLog == nil {
		return dsl.LogEntry{}, false
	}
	return ru.parseAccessLog(line)
}

// ParseLogs filters lines, parses access-log lines and counts codes, flags and details.
func ParseLogs(lines []LogLine, match, capture string, parse func(string) (dsl.LogEntry, bool)) dsl.LogResult {
	res := dsl.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}, Capture: map[string]string{}}
	var mre, cre *regexp.Regexp
	if match != "" {
		mre = regexp.MustCompile(match)
	}
	if capture != "" {
		cre = regexp.MustCompile(capture)
	}
	for _, l := range lines {
		if mre != nil && !mre.MatchString(l.Text) {
			continue
		}
		e, ok := parse(l.Text)
		if !ok {
			e = dsl.LogEntry{Line: l.Text}
		}
		e.Line = l.Text
		if e.Time == "" && !l.Time.IsZero() {
			e.Time = l.Time.UTC().Format(time.RFC3339Nano)
		}
		if e.Access {
			res.Codes[fmt.Sprint(int(e.Code))]++
			for _, f := range e.Flags {
				res.Flags[f]++
			}
			if e.Details != "" {
				res.Details[e.Details]++
			}
		}
		if cre != nil {
			if m := cre.FindStringSubmatch(l.Text); m != nil {
				caps := map[string]string{}
				for i, n := range cre.SubexpNames() {
					if n != "" {
						caps[n] = m[i]
					}
				}
				e.Captures = caps
				res.Captures = append(res.Captures, caps)
				if len(res.Captures) == 1 {
					res.Capture = caps
				}
			}
		}
		res.Lines = append(res.Lines, l.Text)
		res.Entries = append(res.Entries, e)
	}
	res.Count = float64(len(res.Lines))
	return res
}

func (ru *run) dns(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.DNS)
	if p.Server != nil {
		srv := *p.Server
		srv.Namespace = ru.namespace(srv.Namespace)
		p.Server = &srv
	}
	return ru.target.DNS.SetRecords(ctx, p)
}

func (ru *run) assert(ctx context.Context, s *dsl.Step, sr *StepRecord, _ any) error {
	jd := ru.judgeNow(s.Expr)
	switch jd.Outcome {
	case Passed:
		return nil
	case Errored:
		return fmt.Errorf("assert %s: %s", s.Expr.Src, jd.Reason)
	}
	if jd.Reason != "" {
		return &failure{fmt.Sprintf("assert %s failed: %s", s.Expr.Src, jd.Reason)}
	}
	return &failure{fmt.Sprintf("assert failed: %s", jd.Explanation)}
}

func (ru *run) sleep(ctx context.Context, s *dsl.Step, sr *StepRecord, _ any) error {
	ch, stop := ru.clock.Until(ru.clock.Now().Add(s.Sleep))
	defer stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (ru *run) process(ctx context.Context, s *dsl.Step, sr *StepRecord, params any) error {
	p := *params.(*schema.Process)
	if p.Dir == "" {
		p.Dir = ru.sc.Dir
	}
	name := or(s.Name, s.Path)
	proc, err := ru.target.Processes.Start(ctx, name, p)
	if err != nil {
		return err
	}
	ru.mu.Lock()
	ru.procs[name] = proc
	ru.mu.Unlock()
	ru.created1("process "+name, func(ctx context.Context) error {
		err := proc.Stop(ctx, "TERM")
		var out strings.Builder
		for _, l := range proc.Output() {
			out.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " " + l.Text + "\n")
		}
		ru.artifact(s, "output.txt", []byte(out.String()))
		return err
	})
	ru.setValue(s, map[string]any{"name": name, "argv": p.Argv})
	return nil
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
