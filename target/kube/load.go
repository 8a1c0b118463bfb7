package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"labrun.dev/labrun/schema"
	"labrun.dev/labrun/target/fortio"
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
