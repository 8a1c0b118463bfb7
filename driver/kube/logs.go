package kube

import (
	"bufio"
	"bytes"
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
func (d *driver) Logs(ctx context.Context, req schema.Logs, since time.Time) ([]schema.LogLine, error) {
	if req.Process != "" || req.File != "" {
		return nil, errors.New("logs: the kube target reads container logs: give pod or selector (process and file are local)")
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ns := d.ns(req.Namespace)
	pod, err := d.pickPod(ctx, ns, req.Pod, req.Selector, true)
	if err != nil {
		return nil, fmt.Errorf("logs: %w", err)
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
		return nil, fmt.Errorf("logs of %s/%s container %s: %w", ns, pod.Name, container, err)
	}
	defer rc.Close()
	lines, err := parseLogs(rc, since)
	if err != nil {
		return lines, fmt.Errorf("logs of %s/%s container %s: %w", ns, pod.Name, container, err)
	}
	return lines, nil
}

// parseLogs reads "<RFC3339Nano> <text>" lines (the API's timestamps=true form) and keeps those
// at or after since. A line without a timestamp (none should come) is kept with a zero time.
func parseLogs(r io.Reader, since time.Time) ([]schema.LogLine, error) {
	var out []schema.LogLine
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			ts, text, _ := strings.Cut(string(line), " ")
			t, perr := time.Parse(time.RFC3339Nano, ts)
			switch {
			case perr != nil:
				out = append(out, schema.LogLine{Text: string(line)})
			case !t.Before(since):
				out = append(out, schema.LogLine{Time: t, Text: text})
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
