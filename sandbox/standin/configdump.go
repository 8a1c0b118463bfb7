package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"istio.io/istio/pkg/adsc"
	_ "istio.io/istio/pkg/config/xds" // registers every Envoy extension type, so typed_config Anys print as JSON
	"istio.io/istio/pkg/log"
	"istio.io/istio/pkg/model"
)

const (
	clusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	listenerType = "type.googleapis.com/envoy.config.listener.v3.Listener"
	routeType    = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	endpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// xdsTimeout bounds the wait for istiod's first answers; settle is how long the stream must be quiet
// (no further push) before the received state is taken as complete.
var (
	xdsTimeout = 20 * time.Second
	settle     = 300 * time.Millisecond
)

// configDump connects to istiod as the pod and prints what a sidecar of that pod would hold.
func configDump(env environment, query url.Values) (string, error) {
	quietIstioLogs()
	if env.XDSAddress == "" {
		return "", errors.New("LABRUN_ISTIOD_XDS is not set (istiod's plaintext xDS address)")
	}
	nameMatch, err := nameMatcher(query.Get("name_regex"))
	if err != nil {
		return "", err
	}
	id, err := proxyIdentity(env)
	if err != nil {
		return "", err
	}
	state, err := fetchXDS(env, id)
	if err != nil {
		return "", err
	}
	return renderConfigDump(state, query, nameMatch)
}

// nameMatcher mirrors Envoy's name_regex: a Google RE2 regex matched against the whole name.
func nameMatcher(expr string) (func(string) bool, error) {
	if expr == "" {
		return func(string) bool { return true }, nil
	}
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return nil, fmt.Errorf("Error while parsing name_regex from %s: %v", expr, err)
	}
	return re.MatchString, nil
}

// proxy is what the stand-in tells istiod about the pod, as pilot-agent does in its node ID and
// metadata.
type proxy struct {
	ip     string
	typ    model.NodeType
	labels map[string]string // the pod's labels (metadata LABELS); nil when not looked up
}

// proxyIdentity looks the pod up through the API server: kwok hands the exec'd command nothing but
// env vars, and the pod IP is assigned after the per-pod Exec was written. The type is the one
// pilot-agent is started with in the pod's istio-proxy container (`pilot-agent proxy waypoint`: a
// waypoint, `proxy router`: a gateway), sidecar otherwise, so that istiod sends a waypoint a
// waypoint's config.
func proxyIdentity(env environment) (proxy, error) {
	if env.Kubeconfig == "" {
		if env.PodIP == "" {
			return proxy{}, errors.New("neither INSTANCE_IP nor KUBECONFIG is set: cannot learn the pod IP")
		}
		return proxy{ip: env.PodIP, typ: model.SidecarProxy}, nil
	}
	pod, err := getPod(env)
	if err != nil {
		return proxy{}, err
	}
	p := proxy{ip: env.PodIP, typ: model.SidecarProxy, labels: pod.Labels}
	for _, c := range pod.Spec.Containers {
		if c.Name == "istio-proxy" && len(c.Args) >= 2 && c.Args[0] == "proxy" {
			switch t := model.NodeType(c.Args[1]); t {
			case model.Router, model.Waypoint:
				p.typ = t
			}
		}
	}
	if p.ip == "" {
		p.ip = pod.Status.PodIP
	}
	if p.ip == "" {
		return proxy{}, fmt.Errorf("pod %s/%s has no IP yet", env.PodNamespace, env.PodName)
	}
	return p, nil
}

// nodeMetadata is the part of pilot-agent's node metadata istiod needs to find the pod behind
// the proxy (NAMESPACE with the node ID's pod name; LABELS when it cannot) and so its Services:
// a waypoint's config lists the services bound to the waypoint whose Service selects it.
func nodeMetadata(env environment, p proxy) *structpb.Struct {
	labels := map[string]any{}
	for k, v := range p.labels {
		labels[k] = v
	}
	m, err := structpb.NewStruct(map[string]any{
		"NAMESPACE":     env.PodNamespace,
		"NAME":          env.PodName,
		"LABELS":        labels,
		"ISTIO_VERSION": "65536.65536.65536", // adsc's default, which istiod reads as "newest"
	})
	if err != nil {
		panic(err)
	}
	return m
}

// getPod looks the pod up through the API server.
func getPod(env environment) (*corev1.Pod, error) {
	cs, err := kubeClient(env, "")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pod, err := cs.CoreV1().Pods(env.PodNamespace).Get(ctx, env.PodName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("looking up the pod: %w", err)
	}
	return pod, nil
}

// xdsState is one consistent view of what istiod sent.
type xdsState struct {
	clusters  []*anyResource
	listeners []*anyResource
	routes    []*anyResource
	endpoints []*anyResource
}

// anyResource is a received resource with its name and the version and time of the response
// that carried it.
type anyResource struct {
	name    string
	version string
	at      time.Time
	msg     proto.Message
}

// recorder keeps the last response of each type; adsc's own maps are read without its lock.
type recorder struct {
	mu        sync.Mutex
	responses map[string]*discovery.DiscoveryResponse
	at        map[string]time.Time
	last      time.Time
}

func (r *recorder) HandleResponse(_ *adsc.ADSC, resp *discovery.DiscoveryResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.responses[resp.TypeUrl] = resp
	r.at[resp.TypeUrl] = time.Now()
	r.last = time.Now()
}

// fetchXDS runs one ADS session as the pod until the answer is complete and quiet.
func fetchXDS(env environment, p proxy) (*xdsState, error) {
	rec := &recorder{responses: map[string]*discovery.DiscoveryResponse{}, at: map[string]time.Time{}}
	ip := p.ip
	c, err := adsc.New(env.XDSAddress, &adsc.ADSConfig{
		Config: adsc.Config{Namespace: env.PodNamespace, Workload: env.PodName, IP: ip, NodeType: p.typ, Meta: nodeMetadata(env, p)},
		// Not adsc.ConfigInitialRequests(): it also asks for Istio config resources, which need an
		// authenticated identity. Routes and endpoints follow from listeners and clusters.
		InitialDiscoveryRequests: []*discovery.DiscoveryRequest{
			{TypeUrl: clusterType},
			{TypeUrl: listenerType},
		},
		ResponseHandler: rec,
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to istiod at %s: %w", env.XDSAddress, err)
	}
	defer c.Close()
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("ADS stream to istiod at %s: %w", env.XDSAddress, err)
	}
	// c.Wait(…, "cds") can time out although clusters arrived: poll the recorded responses instead.
	deadline := time.Now().Add(xdsTimeout)
	for {
		if complete(c, rec) {
			break
		}
		if time.Now().After(deadline) {
			rec.mu.Lock()
			got := make([]string, 0, len(rec.responses))
			for t := range rec.responses {
				got = append(got, t[strings.LastIndex(t, ".")+1:])
			}
			rec.mu.Unlock()
			sort.Strings(got)
			return nil, fmt.Errorf("istiod at %s sent no complete config for %s/%s (ip %s) within %s; got %v",
				env.XDSAddress, env.PodNamespace, env.PodName, ip, xdsTimeout, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return snapshot(rec), nil
}

// complete reports whether clusters and listeners arrived, the routes and endpoints they call for
// too, and nothing new came in for the settle period.
func complete(c *adsc.ADSC, rec *recorder) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	cds, lds := rec.responses[clusterType], rec.responses[listenerType]
	if cds == nil || len(cds.Resources) == 0 || lds == nil {
		return false
	}
	if len(c.GetEdsClusters()) > 0 && rec.responses[endpointType] == nil {
		return false
	}
	if len(c.GetHTTPListeners()) > 0 && rec.responses[routeType] == nil {
		return false
	}
	return time.Since(rec.last) >= settle
}

// snapshot decodes the last response of each type.
func snapshot(rec *recorder) *xdsState {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	decode := func(typeURL string, name func(proto.Message) string) []*anyResource {
		resp := rec.responses[typeURL]
		if resp == nil {
			return nil
		}
		var out []*anyResource
		for _, a := range resp.Resources {
			m, err := a.UnmarshalNew()
			if err != nil {
				continue
			}
			out = append(out, &anyResource{name: name(m), version: resp.VersionInfo, at: rec.at[typeURL], msg: m})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
		return out
	}
	named := func(m proto.Message) string {
		if n, ok := m.(interface{ GetName() string }); ok {
			return n.GetName()
		}
		return ""
	}
	return &xdsState{
		clusters:  decode(clusterType, named),
		listeners: decode(listenerType, named),
		routes:    decode(routeType, named),
		endpoints: decode(endpointType, func(m proto.Message) string {
			return m.(interface{ GetClusterName() string }).GetClusterName()
		}),
	}
}

// renderConfigDump builds Envoy's /config_dump answer from the received state, honouring
// `resource`, `name_regex` and `include_eds` as Envoy does.
func renderConfigDump(st *xdsState, query url.Values, match func(string) bool) (string, error) {
	mustAny := func(m proto.Message) *anypb.Any {
		a, err := anypb.New(m)
		if err != nil {
			panic(err)
		}
		return a
	}
	keep := func(rs []*anyResource) []*anyResource {
		var out []*anyResource
		for _, r := range rs {
			if match(r.name) {
				out = append(out, r)
			}
		}
		return out
	}
	clusters := &adminv3.ClustersConfigDump{}
	for _, r := range keep(st.clusters) {
		clusters.DynamicActiveClusters = append(clusters.DynamicActiveClusters, &adminv3.ClustersConfigDump_DynamicCluster{
			VersionInfo: r.version, Cluster: mustAny(r.msg), LastUpdated: timestamppb.New(r.at),
		})
	}
	if len(st.clusters) > 0 {
		clusters.VersionInfo = st.clusters[0].version
	}
	listeners := &adminv3.ListenersConfigDump{}
	for _, r := range keep(st.listeners) {
		listeners.DynamicListeners = append(listeners.DynamicListeners, &adminv3.ListenersConfigDump_DynamicListener{
			Name: r.name,
			ActiveState: &adminv3.ListenersConfigDump_DynamicListenerState{
				VersionInfo: r.version, Listener: mustAny(r.msg), LastUpdated: timestamppb.New(r.at),
			},
		})
	}
	if len(st.listeners) > 0 {
		listeners.VersionInfo = st.listeners[0].version
	}
	routes := &adminv3.RoutesConfigDump{}
	for _, r := range keep(st.routes) {
		routes.DynamicRouteConfigs = append(routes.DynamicRouteConfigs, &adminv3.RoutesConfigDump_DynamicRouteConfig{
			VersionInfo: r.version, RouteConfig: mustAny(r.msg), LastUpdated: timestamppb.New(r.at),
		})
	}
	var endpoints *adminv3.EndpointsConfigDump
	_, includeEDS := query["include_eds"]
	if includeEDS {
		endpoints = &adminv3.EndpointsConfigDump{}
		for _, r := range keep(st.endpoints) {
			endpoints.DynamicEndpointConfigs = append(endpoints.DynamicEndpointConfigs, &adminv3.EndpointsConfigDump_DynamicEndpointConfig{
				VersionInfo: r.version, EndpointConfig: mustAny(r.msg), LastUpdated: timestamppb.New(r.at),
			})
		}
	}

	// Envoy's component order: clusters, endpoints (with include_eds), listeners, routes.
	components := []proto.Message{clusters}
	if endpoints != nil {
		components = append(components, endpoints)
	}
	components = append(components, listeners, routes)

	dump := &adminv3.ConfigDump{}
	if resource := query.Get("resource"); resource != "" {
		items, found, err := resourceItems(components, resource)
		if err != nil {
			return "", err
		}
		if !found {
			// Envoy answers 404, which `pilot-agent request` prints and exits 0 on.
			return resource + " not found in config dump", nil
		}
		for _, it := range items {
			dump.Configs = append(dump.Configs, mustAny(it))
		}
	} else {
		for _, c := range components {
			dump.Configs = append(dump.Configs, mustAny(c))
		}
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true, Multiline: true, Indent: " "}.Marshal(dump)
	if err != nil {
		return "", fmt.Errorf("printing config_dump: %w", err)
	}
	return string(b), nil
}

// resourceItems returns the elements of the first component's repeated message field named resource.
func resourceItems(components []proto.Message, resource string) ([]proto.Message, bool, error) {
	for _, c := range components {
		fd := c.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(resource))
		if fd == nil {
			continue
		}
		if !fd.IsList() || fd.Message() == nil {
			return nil, false, fmt.Errorf("%s is not a repeated message field (Envoy answers 400)", resource)
		}
		list := c.ProtoReflect().Get(fd).List()
		out := make([]proto.Message, 0, list.Len())
		for i := 0; i < list.Len(); i++ {
			out = append(out, list.Get(i).Message().Interface())
		}
		return out, true, nil
	}
	return nil, false, nil
}

// quietIstioLogs sends istio's logging (stdout at info by default) to stderr at error level, so the
// config_dump on stdout stays a clean JSON document.
func quietIstioLogs() {
	opts := log.DefaultOptions()
	opts.OutputPaths = []string{"stderr"}
	_ = log.Configure(opts)
	for _, s := range log.Scopes() {
		s.SetOutputLevel(log.ErrorLevel)
	}
}
