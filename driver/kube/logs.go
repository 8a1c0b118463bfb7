package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/schema"
)

// Logs reads a container's log lines written at or after since (container istio-proxy unless
// the step names another). The API's sinceTime has a resolution of one second, so the lines are
// asked for from the start of since's second and filtered here by their timestamps.
func (d *driver) Logs(ctx context.Context, req schema.Logs, from schema.LogSince, line func(schema.LogLine)) error {
	since := from.Time
	if req.Process != "" || req.File != "" {
		return errors.New("logs: the kube target reads container logs: give pod or selector (process and file are local)")
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ns := d.ns(req.Namespace)
	pod, err := d.pickPod(ctx, ns, req.Pod, req.Selector, true)
	if err != nil {
		return fmt.Errorf("logs: %w", err)
	}
	container := req.Container
	if container == "" {
		container = proxyContainer
	}
	opts := &corev1.PodLogOptions{Container: container, Timestamps: true}
	if !since.IsZero() {
		t := metav1.NewTime(since.Truncate(time.Second))
		opts.SinceTime = &t
	}
	rc, err := d.streamCS.CoreV1().Pods(ns).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", ns, pod.Name, container, err)
	}
	defer rc.Close()
	if err := parseLogs(ctx, rc, from, line); err != nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", ns, pod.Name, container, err)
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
