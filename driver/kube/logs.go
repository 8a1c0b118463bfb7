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
func (d *driver) Logs(ctx context.Context, req schema.Logs, since time.Time, line func(schema.LogLine)) error {
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
	if err := parseLogs(rc, since, line); err != nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", ns, pod.Name, container, err)
	}
	return nil
}

// parseLogs reads "<RFC3339Nano> <text>" lines (the API's timestamps=true form) and hands those
// at or after since to emit. A line without a timestamp (none should come) has a zero time. A
// line longer than maxLogLine is handed on in pieces, so that memory stays bounded.
func parseLogs(r io.Reader, since time.Time, emit func(schema.LogLine)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) && len(long)+len(frag) < maxLogLine {
			long = append(long, frag...)
			continue
		}
		line := frag
		if len(long) > 0 {
			line = append(long, frag...)
			long = long[:0]
		}
		if len(line) > 0 {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			ts, text, _ := strings.Cut(string(line), " ")
			t, perr := time.Parse(time.RFC3339Nano, ts)
			switch {
			case perr != nil:
				emit(schema.LogLine{Text: string(line)})
			case !t.Before(since):
				emit(schema.LogLine{Time: t, Text: text})
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// maxLogLine bounds a log line held in memory; a longer one comes in pieces.
const maxLogLine = 1 << 20
