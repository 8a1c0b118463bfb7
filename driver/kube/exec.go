package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"

	"labrun.dev/labrun/schema"
)

// proxyContainer is the Istio sidecar's container.
const proxyContainer = "istio-proxy"

// pickPod finds the pod a reference names: by name, or the first ready pod (by name) that the
// selector matches. With anyPhase, a selector falls back to the first pod by name when none is
// ready (logs of a crashed pod are still wanted).
func (d *driver) pickPod(ctx context.Context, ns, name, selector string, anyPhase bool) (*corev1.Pod, error) {
	pods := d.cs.CoreV1().Pods(ns)
	if name != "" {
		p, err := pods.Get(ctx, name, getOpts)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", ns, name, err)
		}
		return p, nil
	}
	if selector == "" {
		return nil, errors.New("needs a pod or a selector")
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("selector %q: %w", selector, err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("pods %s/{%s}: %w", ns, selector, err)
	}
	if p := firstReady(list.Items); p != nil {
		// The step reads this pod alone: it says so, and which other ready pods the
		// selector matched (replicas whose counters, logs or config it does not read).
		var ready []string
		for i := range list.Items {
			if podReady(&list.Items[i]) {
				ready = append(ready, list.Items[i].Name)
			}
		}
		slices.Sort(ready)
		schema.NotePodPick(ctx, schema.PodPick{Namespace: ns, Selector: selector, Used: []string{p.Name}, Ready: ready})
		return p, nil
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no pod in namespace %s matches %q", ns, selector)
	}
	if anyPhase {
		slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
		return &list.Items[0], nil
	}
	return nil, fmt.Errorf("no ready pod in namespace %s matches %q: %s", ns, selector, notReadyPods(list.Items, 5))
}

// firstReady returns the ready pod whose name sorts first.
func firstReady(pods []corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	for i := range pods {
		if podReady(&pods[i]) && (best == nil || pods[i].Name < best.Name) {
			best = &pods[i]
		}
	}
	return best
}

// defaultContainer picks the container to use when the step names none: the one the pod's
// kubectl.kubernetes.io/default-container annotation names (Istio's injector sets it), else
// the first container that is not the sidecar, else the first.
func defaultContainer(p *corev1.Pod) string {
	has := func(name string) bool {
		return slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	}
	if name := p.Annotations["kubectl.kubernetes.io/default-container"]; name != "" && has(name) {
		return name
	}
	for _, c := range p.Spec.Containers {
		if c.Name != proxyContainer {
			return c.Name
		}
	}
	if len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Name
	}
	return ""
}

// execResult is what a command in a container did.
type execResult struct {
	stdout, stderr []byte
	exit           int
}

// streams are where a command's output goes: nil writers collect it in the result.
type streams struct{ stdout, stderr io.Writer }

// stream runs argv (no shell) in a container and collects its output, or, when out is given,
// writes it there as it comes. A non-zero exit is a
// result, not an error. It tries the WebSocket protocol first and falls back to SPDY when the
// server cannot upgrade (the predicate comes from k8s.io/streaming: the apimachinery one does
// not match v0.37's errors). Cancelling ctx closes the stream and returns at once; a real kubelet
// does not signal the remote process, which runs on until it ends by itself
// (kubernetes/kubernetes#89031), while kwok kills its local process.
func (d *driver) stream(ctx context.Context, ns, pod, container string, argv []string, stdin io.Reader, out ...streams) (execResult, error) {
	req := d.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container,
			Command:   argv,
			Stdin:     stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, kubeTypes().params)
	u := req.URL()
	// labrun's own executors, v5 over WebSocket (execws.go) and v4 over SPDY (execspdy.go),
	// the fallback for an API server that does not upgrade the exec to WebSocket v5: client-go's
	// read a stream that ends without the command's status as exit 0.
	ws := &wsExecutor{cfg: d.streamCfg, url: u.String()}
	spdy := &spdyExecutor{cfg: d.streamCfg, url: u.String()}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return execResult{}, err
	}
	// Locked: on cancellation StreamWithContext returns while its copiers may still write
	// (a caller's writers must be safe for that too).
	var stdout, stderr lockedBuffer
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr}
	if len(out) > 0 && out[0].stdout != nil {
		opts.Stdout = out[0].stdout
	}
	if len(out) > 0 && out[0].stderr != nil {
		opts.Stderr = out[0].stderr
	}
	err = ex.StreamWithContext(ctx, opts)
	res := execResult{stdout: stdout.bytes(), stderr: stderr.bytes()}
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		res.exit = ee.ExitStatus()
		return res, nil
	}
	if code, ok := kwokExitStatus(err); ok {
		res.exit = code
		return res, nil
	}
	if err != nil {
		err = summarizeCall("POST", u, err)
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		return res, fmt.Errorf("exec in %s/%s container %s: %w", ns, pod, container, err)
	}
	return res, nil
}

// lockedBuffer is a bytes.Buffer safe for one writer and a concurrent reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// bytes returns a copy of what was written so far.
func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// kwokExitRE matches how kwok (v0.8.0, the fake kubelet of labrun's sandbox and of kwok clusters)
// reports a non-zero exit: it wraps Go's *exec.ExitError, so the kubelet streaming code does not see
// an ExitError and sends an internal error whose message ends in Go's "exit status N".
var kwokExitRE = regexp.MustCompile(`error executing command in container: cmd wait: .*: exit status (\d+)\s*$`)

// kwokExitStatus reads the exit code from such an error.
func kwokExitStatus(err error) (int, bool) {
	if err == nil {
		return 0, false
	}
	m := kwokExitRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, false
	}
	n, convErr := strconv.Atoi(m[1])
	return n, convErr == nil
}

// Exec runs argv in a pod's container (the pod by name, or the first ready one a selector
// matches) and returns stdout, stderr, the exit code and the named groups of the capture
// pattern on stdout. A non-zero exit is part of the result; the interpreter judges it.
func (d *driver) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	if len(req.Argv) == 0 {
		return schema.ExecResult{}, errors.New("exec: empty argv")
	}
	var capture *regexp.Regexp
	if req.Capture != "" {
		var err error
		if capture, err = regexp.Compile(req.Capture); err != nil {
			return schema.ExecResult{}, fmt.Errorf("exec: capture: %w", err)
		}
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ns := d.ns(req.Namespace)
	pod, err := d.pickPod(ctx, ns, req.Pod, req.Selector, false)
	if err != nil {
		return schema.ExecResult{}, fmt.Errorf("exec: %w", err)
	}
	container := req.Container
	if container == "" {
		container = defaultContainer(pod)
	}
	var stdin io.Reader
	if req.Stdin != "" {
		stdin = strings.NewReader(req.Stdin)
	}
	// The step's writers, when it gives them, receive the output as it comes.
	r, err := d.stream(ctx, ns, pod.Name, container, req.Argv, stdin, streams{req.Stdout, req.Stderr})
	if err != nil {
		return schema.ExecResult{}, err
	}
	out := schema.ExecResult{Stdout: string(r.stdout), Stderr: string(r.stderr), Exit: float64(r.exit)}
	if capture != nil {
		out.Captured = captureGroups(capture, out.Stdout)
	}
	return out, nil
}

// captureGroups returns the named groups of re's first match in s (nil when it does not match).
func captureGroups(re *regexp.Regexp, s string) map[string]string {
	return schema.CaptureMatch(re, s)
}

// tail returns the last n lines of b, for error messages.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
