package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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
// each with its pod; since.Sources, when set, is told which pods are read.
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
	if req.Pod != "" || req.Selector == "" {
		pod, err := d.pickPod(ctx, ns, req.Pod, req.Selector, true)
		if err != nil {
			return fmt.Errorf("logs: %w", err)
		}
		pods = []string{pod.Name}
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
			s.r.Close()
		}
	}()
	for _, pod := range pods {
		rc, err := d.streamCS.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
		if err != nil {
			return fmt.Errorf("logs of %s/%s container %s: %w", ns, pod, container, err)
		}
		streams = append(streams, podLog{pod: pod, r: rc})
	}
	if len(streams) == 1 {
		if err := parseLogs(ctx, streams[0].r, from, func(l schema.LogLine) { l.Pod = pods[0]; line(l) }); err != nil {
			return fmt.Errorf("logs of %s/%s container %s: %w", ns, pods[0], container, err)
		}
		return nil
	}
	if err := mergeLogs(ctx, streams, from, line); err != nil {
		return fmt.Errorf("logs of %s/{%s} container %s: %w", ns, req.Selector, container, err)
	}
	return nil
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

// podLog is the log stream of one pod.
type podLog struct {
	pod string
	r   io.ReadCloser
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
			s.err = parseLogs(ctx, pl.r, from, func(l schema.LogLine) {
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
