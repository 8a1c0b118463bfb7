package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"labrun.dev/labrun/schema"
)

// Logs reads a container's log lines written at or after since (container istio-proxy unless
// the step names another). The API's sinceTime has a resolution of one second, so the lines are
// asked for from the start of since's second and filtered here by their timestamps.
//
// By selector it reads, as `kubectl logs -l` does, the log of every pod the selector matches
// whose container has started (a pod still pending has no log yet), not one of them: "no
// replica logged a 503" is a claim about every replica. Their lines come merged in time order,
// each with its pod; since.Sources, when set, is told which pods are read. A pod noted at the
// mark (since.Pods) that is gone, or replaced by another of its name, makes the read err: the
// lines it wrote since the mark cannot be read.
func (d *driver) Logs(ctx context.Context, req schema.Logs, from schema.LogSince, line func(schema.LogLine)) error {
	since := from.Time
	if req.Process != "" || req.File != "" {
		return errors.New("logs: the kube target reads container logs: give pod or selector (process and file are local)")
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ns := d.ns(req.Namespace)
	container := req.Container
	if container == "" {
		container = proxyContainer
	}
	var pods []string
	byName := map[string]*corev1.Pod{}
	if req.Pod != "" || req.Selector == "" {
		pod, err := d.pickPod(ctx, ns, req.Pod, req.Selector, true)
		if err != nil {
			return fmt.Errorf("logs: %w", err)
		}
		pods = []string{pod.Name}
		byName[pod.Name] = pod
	} else {
		sel, err := labels.Parse(req.Selector)
		if err != nil {
			return fmt.Errorf("logs: selector %q: %w", req.Selector, err)
		}
		list, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return fmt.Errorf("logs: pods %s/{%s}: %w", ns, req.Selector, err)
		}
		if len(list.Items) == 0 {
			return fmt.Errorf("logs: no pod in namespace %s matches %q", ns, req.Selector)
		}
		if pods = logPods(list.Items, container); len(pods) == 0 {
			return fmt.Errorf("logs: none of the %d pods in namespace %s that match %q has started its container %s", len(list.Items), ns, req.Selector, container)
		}
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
	}
	// A pod there by the name and UID noted, not among the selector's, was relabelled out of
	// it: a watch by selector sends it as deleted, the object as it was before.
	stillThere := func(name, uid string) bool {
		p, err := d.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && string(p.UID) == uid
	}
	if err := goneSince(from.Pods, ns, byName, stillThere); err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	if from.Sources != nil {
		from.Sources(pods)
	}
	opts := &corev1.PodLogOptions{Container: container, Timestamps: true}
	if !since.IsZero() {
		t := metav1.NewTime(since.Truncate(time.Second))
		opts.SinceTime = &t
	}
	var streams []podLog
	defer func() {
		for _, s := range streams {
			for _, r := range s.rs {
				r.Close()
			}
		}
	}()
	for _, pod := range pods {
		previous, err := previousSince(byName[pod], container, since)
		if err != nil {
			return fmt.Errorf("logs of %s/%s: %w", ns, pod, err)
		}
		pl := podLog{pod: pod}
		streams = append(streams, pl)
		if previous {
			// The previous instance's lines since the mark come first: it ended before the
			// current one started.
			popts := *opts
			popts.Previous = true
			rc, err := d.streamCS.CoreV1().Pods(ns).GetLogs(pod, &popts).Stream(ctx)
			if err != nil {
				return fmt.Errorf("logs of %s/%s container %s: its previous instance, which ran after the mark: %w", ns, pod, container, err)
			}
			pl.rs = append(pl.rs, rc)
			streams[len(streams)-1] = pl
		}
		rc, err := d.streamCS.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
		if err != nil {
			return fmt.Errorf("logs of %s/%s container %s: %w", ns, pod, container, err)
		}
		pl.rs = append(pl.rs, rc)
		streams[len(streams)-1] = pl
	}
	if len(streams) == 1 {
		if err := streams[0].parse(ctx, from, func(l schema.LogLine) { l.Pod = pods[0]; line(l) }); err != nil {
			return fmt.Errorf("logs of %s/%s container %s: %w", ns, pods[0], container, err)
		}
		return nil
	}
	if err := mergeLogs(ctx, streams, from, line); err != nil {
		return fmt.Errorf("logs of %s/{%s} container %s: %w", ns, req.Selector, container, err)
	}
	return nil
}

// MarkPods notes the pods ref names now (schema.PodMarker): the pod by its name, or every
// pod the selector matches, whatever its phase, each with its UID. A pod by name that is not
// there is not noted.
func (d *driver) MarkPods(ctx context.Context, ref schema.PodRef) (schema.PodMark, error) {
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ns := d.ns(ref.Namespace)
	mark := schema.PodMark{UIDs: map[string]string{}}
	if ref.Pod != "" {
		p, err := d.cs.CoreV1().Pods(ns).Get(ctx, ref.Pod, getOpts)
		switch {
		case apierrors.IsNotFound(err):
			return mark, nil
		case err != nil:
			return mark, fmt.Errorf("pod %s/%s: %w", ns, ref.Pod, err)
		}
		mark.UIDs[p.Name] = string(p.UID)
		return mark, nil
	}
	sel, err := labels.Parse(ref.Selector)
	if err != nil {
		return mark, fmt.Errorf("selector %q: %w", ref.Selector, err)
	}
	list, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return mark, fmt.Errorf("pods %s/{%s}: %w", ns, ref.Selector, err)
	}
	for _, p := range list.Items {
		mark.UIDs[p.Name] = string(p.UID)
	}
	mark.Since = d.watchPods(ctx, ns, sel.String(), list.ResourceVersion, maps.Clone(mark.UIDs))
	return mark, nil
}

// goneSince errs when a pod noted at the mark is not among the pods there now (by name), or
// one of its name is another pod (its UID differs), or one seen since the mark is gone: what
// the pod wrote since the mark went with it (or, relabelled out of the selector, is not read),
// and the read, judged on the others' lines, could pass over it. stillThere says whether a
// pod of that name and UID is still in the namespace.
func goneSince(mark *schema.PodMark, ns string, now map[string]*corev1.Pod, stillThere func(name, uid string) bool) error {
	if mark == nil {
		return nil
	}
	how := func(name, uid string) string {
		if stillThere(name, uid) {
			return "left the selector (relabelled)"
		}
		return "was deleted"
	}
	var gone []string
	for _, name := range slices.Sorted(maps.Keys(mark.UIDs)) {
		switch p, ok := now[name]; {
		case !ok:
			gone = append(gone, fmt.Sprintf("%s/%s %s", ns, name, how(name, mark.UIDs[name])))
		case string(p.UID) != mark.UIDs[name]:
			gone = append(gone, fmt.Sprintf("%s/%s was replaced by another pod of its name", ns, name))
		}
	}
	if ps, ok := mark.Since.(*podsSince); ok {
		went := ps.went(now)
		for _, name := range slices.Sorted(maps.Keys(went)) {
			gone = append(gone, fmt.Sprintf("%s/%s came after the mark and %s", ns, name, how(name, went[name])))
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return fmt.Errorf("of the pods the read named at its mark, %s since: the lines written since the mark by a pod that is gone (or no longer matches) are not read, and judged without them the read could pass over them; read the logs before the pod goes (a logs step before the step that deletes it), or mark after it went (since: a step that starts after)",
		strings.Join(gone, ", "))
}

// logPods are the pods (by name) whose container has a log: it is running or has run (a
// restarted or terminated one included); a pod whose container has not started is left out.
func logPods(pods []corev1.Pod, container string) []string {
	var out []string
	for _, p := range pods {
		for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			if cs.Name == container && (cs.State.Running != nil || cs.State.Terminated != nil || cs.RestartCount > 0) {
				out = append(out, p.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// previousSince says whether the previous instance of pod's container (the one before a
// restart) may have written lines at or after since: it ended then or later. The API serves
// its log only when asked for it (previous=true); read without it, "no line says 503" was
// judged on the current instance's lines alone. It errs where an instance before that one may
// have written lines since, too: the kubelet keeps the log of the last ended instance only,
// and what the others wrote cannot be read. Pod status times have a resolution of one
// second, so an instance that ended or started in the mark's second counts as after it.
func previousSince(p *corev1.Pod, container string, since time.Time) (bool, error) {
	if p == nil || since.IsZero() {
		return false, nil
	}
	statuses := slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
	i := slices.IndexFunc(statuses, func(cs corev1.ContainerStatus) bool { return cs.Name == container })
	if i < 0 {
		return false, nil
	}
	cs := statuses[i]
	mark := since.Truncate(time.Second)
	last := cs.LastTerminationState.Terminated
	var oldest time.Time // the start of the oldest instance whose log is read
	readable := 1        // how many instances' logs the API serves
	previous := false
	switch {
	case cs.State.Running != nil || cs.State.Terminated != nil:
		if cs.State.Running != nil {
			oldest = cs.State.Running.StartedAt.Time
		} else {
			oldest = cs.State.Terminated.StartedAt.Time
		}
		if last != nil {
			if last.FinishedAt.Time.Before(mark) {
				return false, nil // the previous instance, and every one before it, ended before the mark
			}
			previous, oldest, readable = true, last.StartedAt.Time, 2
		}
	case last != nil: // waiting to start again: the API serves the last ended instance's log
		oldest = last.StartedAt.Time
	default:
		return false, nil
	}
	if int(cs.RestartCount)+1 > readable && !oldest.Before(mark) {
		return false, fmt.Errorf("container %s restarted %d times, and the oldest instance whose log the kubelet keeps started at %s, after the mark (%s): the lines the instances before it wrote since the mark cannot be read (the kubelet keeps the log of the last ended instance only)",
			container, cs.RestartCount, oldest.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339Nano))
	}
	return previous, nil
}

// podLog is the log of one pod: its streams in time order (a restarted container's previous
// instance's, then the current one's).
type podLog struct {
	pod string
	rs  []io.ReadCloser
}

// parse parses each of the pod's streams in turn.
func (pl podLog) parse(ctx context.Context, from schema.LogSince, emit func(schema.LogLine)) error {
	for _, r := range pl.rs {
		if err := parseLogs(ctx, r, from, emit); err != nil {
			return err
		}
	}
	return nil
}

// mergeLogs reads the pods' logs at once and hands their lines on in time order (each pod's
// own are in order already; a line without a timestamp goes as it comes), each with its pod.
// It holds one line per pod.
func mergeLogs(outer context.Context, logs []podLog, from schema.LogSince, emit func(schema.LogLine)) error {
	ctx, cancel := context.WithCancel(outer)
	defer cancel()
	type stream struct {
		lines chan schema.LogLine
		err   error
	}
	streams := make([]*stream, len(logs))
	var wg sync.WaitGroup
	for i, pl := range logs {
		s := &stream{lines: make(chan schema.LogLine)}
		streams[i] = s
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(s.lines)
			s.err = pl.parse(ctx, from, func(l schema.LogLine) {
				l.Pod = pl.pod
				select {
				case s.lines <- l:
				case <-ctx.Done():
				}
			})
		}()
	}
	heads := make([]*schema.LogLine, len(streams))
	next := func(i int) {
		if l, ok := <-streams[i].lines; ok {
			heads[i] = &l
		} else {
			heads[i] = nil
		}
	}
	for i := range streams {
		next(i)
	}
	for ctx.Err() == nil {
		best := -1
		for i, h := range heads {
			if h != nil && (best < 0 || h.Time.Before(heads[best].Time)) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		emit(*heads[best])
		next(best)
	}
	cancel()
	for i := range streams {
		for range streams[i].lines { // let a reader blocked on a send end
		}
	}
	wg.Wait()
	var errs []error
	for i, s := range streams {
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			errs = append(errs, fmt.Errorf("%s: %w", logs[i].pod, s.err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if outer.Err() != nil {
		return context.Cause(outer)
	}
	return nil
}

// parseLogs reads "<RFC3339Nano> <text>" lines (the API's timestamps=true form) and hands those
// that may have been written at or after since to emit: a time is as precise as it is written
// (RFC3339Nano drops trailing zeros: ".4Z" is any instant of that tenth), see
// schema.LogSince.NotBefore. A line without a timestamp (none should come) has a zero time. A
// line longer than schema.MaxLine is handed on in pieces, so that memory stays bounded.
func parseLogs(ctx context.Context, r io.Reader, since schema.LogSince, emit func(schema.LogLine)) error {
	return schema.ReadLines(ctx, r, func(line []byte) {
		ts, text, _ := strings.Cut(string(line), " ")
		t, perr := time.Parse(time.RFC3339Nano, ts)
		switch {
		case perr != nil:
			emit(schema.LogLine{Text: string(line)})
		case since.NotBefore(t, schema.StampUnit(ts)):
			emit(schema.LogLine{Time: t, Text: text})
		}
	})
}
