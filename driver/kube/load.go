package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"labrun.dev/labrun/driver/fortio"
	"labrun.dev/labrun/schema"
)

// Load runs `fortio load -json - …` (arguments from fortio.CLIArgs, so a load means the same on
// both targets) in the client pod's container, by default its first container that is not
// istio-proxy, and decodes fortio's JSON from stdout; Raw keeps that JSON.
//
// Cancelling ctx closes the exec stream and Load returns at once with the cancellation error.
// What happens to the remote fortio is the kubelet's business: a real kubelet (containerd, CRI-O)
// does not signal a process whose exec stream closed (kubernetes/kubernetes#89031,
// opencontainers/runc#3359), so fortio runs on until its own bound (-n requests, or -t duration)
// and its results are lost; kwok, the sandbox's kubelet, kills its local process with the
// request. Loads are therefore always bounded by -n or -t, and a load that runs with -t also gets
// a deadline of duration + timeout + 1m here.
func (d *driver) Load(ctx context.Context, req schema.Load) (schema.LoadResponse, error) {
	if req.From == nil || (req.From.Pod == "" && req.From.Selector == "") {
		return schema.LoadResponse{}, errors.New("load: the kube target runs fortio in a pod: give from: {pod or selector}")
	}
	args, warnings, err := fortio.CLIArgs(req)
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load: %w", err)
	}
	if req.Requests == 0 {
		// -t bounds the run: allow its duration, one request timeout and slack for the exec.
		d := req.WithDefaults() // idempotent: the load step has applied them already
		dur, to := d.Duration.D(), d.Timeout.D()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dur+to+time.Minute)
		defer cancel()
	}
	ns := d.ns(req.From.Namespace)
	if req.From.Pods > 0 {
		return d.loadFromPods(ctx, ns, req, args, warnings)
	}
	pod, err := d.pickPod(ctx, ns, req.From.Pod, req.From.Selector, false)
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load: %w", err)
	}
	container := req.From.Container
	if container == "" {
		container = defaultContainer(pod)
	}
	argv := append([]string{"fortio"}, args...)
	r, err := d.stream(ctx, ns, pod.Name, container, argv, nil)
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load: %w", err)
	}
	res, derr := fortio.DecodeJSON(r.stdout)
	if derr != nil && len(res.Raw) == 0 {
		if r.exit != 0 {
			return schema.LoadResponse{}, fmt.Errorf("load: fortio in %s/%s container %s exited with code %d: %s",
				ns, pod.Name, container, r.exit, tail(r.stderr, 10))
		}
		return schema.LoadResponse{}, fmt.Errorf("load: %w; fortio's stderr: %s", derr, tail(r.stderr, 10))
	}
	res.Raw = r.stdout
	// Warnings known before the run first, as the local target orders them.
	for _, w := range res.Warnings {
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	res.Warnings = warnings
	if r.exit != 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("fortio exited with code %d: %s", r.exit, tail(r.stderr, 3)))
	}
	return res, derr
}

// loadFromPods runs the same fortio in req.From.Pods ready pods of the selector (the first by
// name) at once and merges their results (fortio.MergeJSON); each pod's JSON is an artifact.
// One pod that fails fails the load, naming the pod; the others are cancelled.
func (d *driver) loadFromPods(ctx context.Context, ns string, req schema.Load, args, warnings []string) (schema.LoadResponse, error) {
	n := req.From.Pods
	if req.From.Selector == "" {
		return schema.LoadResponse{}, fmt.Errorf("load: from.pods: %d needs a selector to pick the pods by", n)
	}
	sel, err := labels.Parse(req.From.Selector)
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load: selector %q: %w", req.From.Selector, err)
	}
	list, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load: pods %s/{%s}: %w", ns, req.From.Selector, err)
	}
	var ready []*corev1.Pod
	for i := range list.Items {
		if podReady(&list.Items[i]) {
			ready = append(ready, &list.Items[i])
		}
	}
	slices.SortFunc(ready, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if len(ready) < n {
		return schema.LoadResponse{}, fmt.Errorf("load: from.pods is %d, and %d of the %d pods in %s matching %q are ready",
			n, len(ready), len(list.Items), ns, req.From.Selector)
	}
	all := make([]string, len(ready))
	for i, p := range ready {
		all[i] = p.Name
	}
	schema.NotePodPick(ctx, schema.PodPick{Namespace: ns, Selector: req.From.Selector, Used: all[:n], Ready: all})
	ready = ready[:n]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	argv := append([]string{"fortio"}, args...)
	type out struct {
		stdout []byte
		err    error
	}
	outs := make([]out, n)
	names := make([]string, n)
	var wg sync.WaitGroup
	for i, pod := range ready {
		names[i] = pod.Name
		container := req.From.Container
		if container == "" {
			container = defaultContainer(pod)
		}
		wg.Go(func() {
			r, err := d.stream(ctx, ns, pod.Name, container, argv, nil)
			switch {
			case err != nil:
				err = fmt.Errorf("load: pod %s: %w", pod.Name, err)
			case r.exit != 0 && len(bytes.TrimSpace(r.stdout)) == 0:
				err = fmt.Errorf("load: fortio in %s/%s container %s exited with code %d: %s",
					ns, pod.Name, container, r.exit, tail(r.stderr, 10))
			}
			if err != nil {
				cancel()
			}
			outs[i] = out{stdout: r.stdout, err: err}
		})
	}
	wg.Wait()
	var res schema.LoadResponse
	stdouts := make([][]byte, n)
	for i, o := range outs {
		if o.err != nil && !errors.Is(o.err, context.Canceled) {
			return schema.LoadResponse{}, o.err
		}
		stdouts[i] = o.stdout
		res.Artifacts = append(res.Artifacts, schema.Artifact{Name: "fortio-" + names[i] + ".json", Data: o.stdout})
	}
	for _, o := range outs {
		if o.err != nil {
			return schema.LoadResponse{Artifacts: res.Artifacts}, o.err
		}
	}
	merged, err := fortio.MergeJSON(stdouts, names)
	merged.Artifacts = res.Artifacts
	if err != nil {
		return merged, fmt.Errorf("load: %w", err)
	}
	for _, w := range merged.Warnings {
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	merged.Warnings = warnings
	return merged, nil
}
