package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

// adminPort is Envoy's admin port in an Istio sidecar.
const adminPort = 15000

// envoyAdmin reads Envoy admin paths ("stats?filter=…") of one pod's sidecar.
type envoyAdmin interface {
	get(ctx context.Context, path string) ([]byte, error)
	close()
}

// openAdmin reaches the Envoy admin of the pod ref names, through exec of `pilot-agent request`
// in the sidecar container (istio-proxy unless ref names another), or a port-forward to 15000;
// and the pod it reads (a selector picks one).
func (d *driver) openAdmin(ctx context.Context, ref *schema.PodRef) (envoyAdmin, *corev1.Pod, error) {
	ns := d.ns(ref.Namespace)
	pod, err := d.pickPod(ctx, ns, ref.Pod, ref.Selector, false)
	if err != nil {
		return nil, nil, err
	}
	if d.opts.EnvoyVia == EnvoyViaPortForward {
		pf, err := d.portForward(ctx, ns, pod.Name)
		if err != nil {
			return nil, nil, err
		}
		return pf, pod, nil
	}
	container := ref.Container
	if container == "" {
		container = proxyContainer
	}
	return execAdmin{d: d, ns: ns, pod: pod.Name, container: container}, pod, nil
}

// execAdmin runs `pilot-agent request GET <path>`: proxy images are distroless (no curl, no
// shell), and pilot-agent ships in every one of them.
type execAdmin struct {
	d                  *driver
	ns, pod, container string
}

func (a execAdmin) get(ctx context.Context, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, a.d.opts.RequestTimeout)
	defer cancel()
	r, err := a.d.stream(ctx, a.ns, a.pod, a.container, []string{"pilot-agent", "request", "GET", path}, nil)
	if err != nil {
		return nil, err
	}
	if r.exit != 0 {
		return nil, fmt.Errorf("pilot-agent request GET %s in %s/%s container %s exited with code %d: %s",
			envoy.ShownPath(path), a.ns, a.pod, a.container, r.exit, tail(r.stderr, 5))
	}
	return r.stdout, nil
}

func (execAdmin) close() {}

// pfAdmin reads Envoy admin over a port-forward to the pod's port 15000.
type pfAdmin struct {
	base   string
	cancel context.CancelFunc
	done   <-chan struct{}
	client *http.Client
}

// portForward opens a port-forward from a free local port to the pod's admin port.
func (d *driver) portForward(ctx context.Context, ns, pod string) (*pfAdmin, error) {
	u := d.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(d.streamCfg)
	if err != nil {
		return nil, err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	// The forward lives until close, not until ctx: ctx only bounds getting it ready.
	pfCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan struct{})
	var errOut bytes.Buffer
	pf, err := portforward.NewOnAddressesWithContext(pfCtx, dialer, []string{"127.0.0.1"},
		[]string{"0:" + strconv.Itoa(adminPort)}, ready, io.Discard, &errOut)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		errc <- pf.ForwardPorts()
	}()
	readyCtx, readyCancel := context.WithTimeout(ctx, d.opts.RequestTimeout)
	defer readyCancel()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		return nil, fmt.Errorf("port-forward to %s/%s:%d: %w", ns, pod, adminPort, err)
	case <-readyCtx.Done():
		cancel()
		<-done
		return nil, fmt.Errorf("port-forward to %s/%s:%d: %w", ns, pod, adminPort, context.Cause(readyCtx))
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) == 0 {
		cancel()
		<-done
		return nil, fmt.Errorf("port-forward to %s/%s:%d: no local port: %v", ns, pod, adminPort, err)
	}
	return &pfAdmin{
		base:   "http://127.0.0.1:" + strconv.Itoa(int(ports[0].Local)) + "/",
		cancel: cancel,
		done:   done,
		client: &http.Client{Timeout: d.opts.RequestTimeout, Transport: &http.Transport{DisableKeepAlives: true}},
	}, nil
}

func (a *pfAdmin) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL: its filter is ~1,500 characters
		}
		return nil, fmt.Errorf("envoy admin GET %s: %w", envoy.ShownPath(path), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("envoy admin GET %s: %w", envoy.ShownPath(path), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("envoy admin GET %s: %s: %s", envoy.ShownPath(path), resp.Status, tail(body, 5))
	}
	return body, nil
}

func (a *pfAdmin) close() {
	a.cancel()
	<-a.done
}

// Snapshot reads the stats of exactly one Envoy cluster of a pod's sidecar: counters and gauges
// by two calls (type=Counters, type=Gauges: the text form does not say which is which),
// histograms and /clusters?format=json when asked. The calls run at the same time. The raw
// outputs are artifacts.
func (d *driver) Snapshot(ctx context.Context, req schema.Snapshot) (schema.StatsSnapshot, error) {
	snap := schema.StatsSnapshot{Source: req.Source()}
	if req.Envoy == nil {
		return snap, errors.New("snapshot: the kube target reads Envoy sidecars: give envoy: {pod or selector}")
	}
	if req.Cluster == "" {
		return snap, errors.New("snapshot: give the exact Envoy cluster, e.g. outbound|8080||backend.lab.svc.cluster.local")
	}
	admin, pod, err := d.openAdmin(ctx, req.Envoy)
	if err != nil {
		return snap, fmt.Errorf("snapshot: %w", err)
	}
	defer admin.close()
	// The pod read: two snapshots of one selector may read two pods (the first deleted in
	// between), whose counters have no delta.
	snap.Pod, snap.PodUID = pod.Namespace+"/"+pod.Name, string(pod.UID)
	if pod.Namespace == "" {
		snap.Pod = d.ns(req.Envoy.Namespace) + "/" + pod.Name
	}

	filter := "stats?filter=" + url.QueryEscape(envoy.StatsFilter(req.Cluster))
	type fetch struct {
		artifact, path string
		data           []byte
		err            error
	}
	fetches := []*fetch{
		{artifact: "stats-counters.txt", path: filter + "&type=Counters"},
		{artifact: "stats-gauges.txt", path: filter + "&type=Gauges"},
	}
	if req.Histograms {
		fetches = append(fetches, &fetch{artifact: "stats-histograms.txt", path: filter + "&type=Histograms"})
	}
	if req.Hosts {
		fetches = append(fetches, &fetch{artifact: "clusters.json", path: "clusters?format=json"})
	}
	var wg sync.WaitGroup
	for _, f := range fetches {
		wg.Go(func() { f.data, f.err = admin.get(ctx, f.path) })
	}
	wg.Wait()
	var errs []error
	seen := map[string]bool{}
	for _, f := range fetches {
		if f.err != nil {
			// Every call fails the same way when the cluster is unreachable: say it once.
			if !seen[f.err.Error()] {
				seen[f.err.Error()] = true
				errs = append(errs, f.err)
			}
			continue
		}
		snap.Artifacts = append(snap.Artifacts, schema.Artifact{Name: f.artifact, Data: f.data})
	}
	if err := errors.Join(errs...); err != nil {
		if full := fullErrors(err); full != "" {
			snap.Artifacts = append(snap.Artifacts, schema.Artifact{Name: "error.txt", Data: []byte(full + "\n")})
		}
		return snap, fmt.Errorf("snapshot: %w", err)
	}
	parse := func(f *fetch) error {
		var err error
		switch f.artifact {
		case "stats-counters.txt":
			snap.Counters, err = envoy.ClusterStats(f.data, req.Cluster)
		case "stats-gauges.txt":
			snap.Gauges, err = envoy.ClusterStats(f.data, req.Cluster)
		case "stats-histograms.txt":
			snap.Histograms, err = envoy.ClusterHistograms(f.data, req.Cluster)
		case "clusters.json":
			snap.Hosts, err = envoy.Clusters(f.data, req.Cluster)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.artifact, err)
		}
		return nil
	}
	for _, f := range fetches {
		errs = append(errs, parse(f))
	}
	if err := errors.Join(errs...); err != nil {
		return snap, fmt.Errorf("snapshot: %w", err)
	}
	return snap, nil
}

// Config reads part of a sidecar's config_dump: one cluster, listener, route configuration or
// cluster's endpoints by exact name (dynamic first, then static, by ?resource= queries; then the
// whole dump, which also has warming resources and, when the resource is not there, the names
// to suggest), the names of one kind of resource, or the whole dump; read through Envoy's types
// (envoy.ReadConfig), then the value at req.Path.
func (d *driver) Config(ctx context.Context, req schema.Config) (schema.ConfigResult, error) {
	var res schema.ConfigResult
	if req.Envoy == nil {
		return res, errors.New("config: the kube target reads Envoy sidecars: give envoy: {pod or selector}")
	}
	type kind struct {
		name      string
		resources []string
		query     string // added to each ?resource= query
		pick      func(dump []byte, name string) (map[string]any, error)
		whole     func(dump []byte, name string) (map[string]any, error) // from the whole dump
	}
	var k *kind
	switch {
	case req.Cluster != "":
		k = &kind{req.Cluster, []string{"dynamic_active_clusters", "static_clusters"}, "", envoy.DumpCluster, envoy.DumpCluster}
	case req.Listener != "":
		k = &kind{req.Listener, []string{"dynamic_listeners", "static_listeners"}, "", envoy.DumpListener, envoy.DumpListener}
	case req.Route != "":
		k = &kind{req.Route, []string{"dynamic_route_configs", "static_route_configs"}, "", envoy.DumpRoute, envoy.DumpRoute}
	case req.Endpoints != "":
		// The EDS part (include_eds); a cluster that carries its endpoints itself has them in
		// its load_assignment, which the whole dump's clusters show.
		k = &kind{req.Endpoints, []string{"dynamic_endpoint_configs", "static_endpoint_configs"}, "&include_eds", envoy.DumpEndpoints, envoy.DumpClusterEndpoints}
	}
	admin, _, err := d.openAdmin(ctx, req.Envoy)
	if err != nil {
		return res, fmt.Errorf("config: %w", err)
	}
	defer admin.close()
	whole := func(query string) ([]byte, error) {
		data, err := admin.get(ctx, "config_dump"+query)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		res.Artifacts = append(res.Artifacts, schema.Artifact{Name: "config_dump.json", Data: data})
		return data, nil
	}

	var resource any
	switch {
	case req.Names != "":
		data, err := whole("")
		if err != nil {
			return res, err
		}
		names, err := envoy.DumpNames(data, req.Names)
		if err != nil {
			return res, fmt.Errorf("config: %w", err)
		}
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		res.Value, res.Resource = list, list
		return res, nil
	case k == nil:
		data, err := whole("")
		if err != nil {
			return res, err
		}
		if err := json.Unmarshal(data, &resource); err != nil {
			return res, fmt.Errorf("config: config_dump is not JSON: %w", err)
		}
	default:
		regex := url.QueryEscape("^" + regexp.QuoteMeta(k.name) + "$")
		for _, r := range k.resources {
			data, err := admin.get(ctx, "config_dump?resource="+r+"&name_regex="+regex+k.query)
			if err != nil {
				return res, fmt.Errorf("config: %w", err)
			}
			res.Artifacts = append(res.Artifacts, schema.Artifact{Name: "config_dump-" + r + ".json", Data: data})
			m, err := k.pick(data, k.name)
			if errors.Is(err, envoy.ErrNotFound) {
				continue
			}
			if err != nil {
				return res, fmt.Errorf("config: %w", err)
			}
			resource = m
			break
		}
		if resource == nil {
			data, err := whole(strings.Replace(k.query, "&", "?", 1))
			if err != nil {
				return res, err
			}
			m, err := k.whole(data, k.name)
			if err != nil {
				return res, fmt.Errorf("config: %w", err)
			}
			resource = m
		}
	}
	value, normalized, err := envoy.ReadConfig(resource, req.ResourceKind(), req.Path, req.Durations == schema.DurationsSeconds)
	res.Resource = normalized
	if err != nil {
		return res, fmt.Errorf("config: %w", err)
	}
	res.Value = value
	return res, nil
}
