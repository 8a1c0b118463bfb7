package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// fakeGroup is one API group of fakeDiscovery: its versions, preferred first.
type fakeGroup struct {
	name     string
	versions []fakeVersion
}

type fakeVersion struct {
	version   string
	resources []metav1.APIResource
	broken    bool // the older format: its request fails; aggregated: it is stale
}

// fakeDiscovery is an API server's discovery, served in the aggregated format when asked for
// it (unless legacyOnly) and in the older one otherwise. Tests change groups between resets.
type fakeDiscovery struct {
	mu         sync.Mutex
	groups     []fakeGroup // the core group first
	legacyOnly bool
}

func (f *fakeDiscovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	aggregated := !f.legacyOnly && strings.Contains(r.Header.Get("Accept"), "as=APIGroupDiscoveryList")
	write := func(contentType string, v any) {
		w.Header().Set("Content-Type", contentType)
		_ = json.NewEncoder(w).Encode(v)
	}
	const aggType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	switch path := r.URL.Path; {
	case path == "/api" && aggregated:
		write(aggType, f.aggregated(f.groups[:1]))
	case path == "/apis" && aggregated:
		write(aggType, f.aggregated(f.groups[1:]))
	case path == "/api":
		write("application/json", metav1.APIVersions{Versions: []string{"v1"}})
	case path == "/apis":
		var l metav1.APIGroupList
		for _, g := range f.groups[1:] {
			ag := metav1.APIGroup{Name: g.name}
			for _, v := range g.versions {
				ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v.version, Version: v.version})
			}
			ag.PreferredVersion = ag.Versions[0]
			l.Groups = append(l.Groups, ag)
		}
		write("application/json", l)
	default:
		for _, g := range f.groups {
			for _, v := range g.versions {
				gv := k8sschema.GroupVersion{Group: g.name, Version: v.version}
				want := "/apis/" + gv.String()
				if g.name == "" {
					want = "/api/" + v.version
				}
				if path != want {
					continue
				}
				if v.broken {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					write("application/json", metav1.Status{Status: "Failure", Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "the server is currently unable to handle the request"})
					return
				}
				write("application/json", metav1.APIResourceList{GroupVersion: gv.String(), APIResources: v.resources})
				return
			}
		}
		http.NotFound(w, r)
	}
}

func (f *fakeDiscovery) aggregated(groups []fakeGroup) apidiscoveryv2.APIGroupDiscoveryList {
	var l apidiscoveryv2.APIGroupDiscoveryList
	for _, g := range groups {
		ag := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			av := apidiscoveryv2.APIVersionDiscovery{Version: v.version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			if v.broken {
				av.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
			}
			for _, r := range v.resources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				scope := apidiscoveryv2.ScopeCluster
				if r.Namespaced {
					scope = apidiscoveryv2.ScopeNamespace
				}
				ar := apidiscoveryv2.APIResourceDiscovery{
					Resource: r.Name, SingularResource: r.SingularName, Scope: scope, Verbs: r.Verbs, ShortNames: r.ShortNames,
					ResponseKind: &metav1.GroupVersionKind{Group: g.name, Version: v.version, Kind: r.Kind},
				}
				for _, sub := range v.resources {
					if parent, name, ok := strings.Cut(sub.Name, "/"); ok && parent == r.Name {
						ar.Subresources = append(ar.Subresources, apidiscoveryv2.APISubresourceDiscovery{
							Subresource: name, Verbs: sub.Verbs, ResponseKind: &metav1.GroupVersionKind{Kind: sub.Kind},
						})
					}
				}
				av.Resources = append(av.Resources, ar)
			}
			ag.Versions = append(ag.Versions, av)
		}
		l.Items = append(l.Items, ag)
	}
	return l
}

func (f *fakeDiscovery) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func res(name, singular, kind string, namespaced bool, verbs ...string) metav1.APIResource {
	if verbs == nil {
		verbs = []string{"get", "list", "delete", "create"}
	}
	return metav1.APIResource{Name: name, SingularName: singular, Kind: kind, Namespaced: namespaced, Verbs: verbs}
}

func newFakeDiscovery() *fakeDiscovery {
	return &fakeDiscovery{groups: []fakeGroup{
		{"", []fakeVersion{{version: "v1", resources: []metav1.APIResource{
			res("pods", "pod", "Pod", true), res("pods/log", "", "Pod", true, "get"),
			res("configmaps", "configmap", "ConfigMap", true), res("namespaces", "namespace", "Namespace", false),
			res("bindings", "", "Binding", true, "create"),
		}}}},
		{"apps", []fakeVersion{{version: "v1", resources: []metav1.APIResource{
			res("deployments", "deployment", "Deployment", true), res("deployments/scale", "", "Scale", true, "get", "update"),
		}}}},
		{"extensions", []fakeVersion{{version: "v1beta1", resources: []metav1.APIResource{
			res("deployments", "deployment", "Deployment", true), res("ingresses", "ingress", "Ingress", true),
		}}}},
		{"networking.istio.io", []fakeVersion{
			{version: "v1", resources: []metav1.APIResource{res("destinationrules", "destinationrule", "DestinationRule", true)}},
			{version: "v1beta1", resources: []metav1.APIResource{
				res("destinationrules", "destinationrule", "DestinationRule", true), res("sidecars", "sidecar", "Sidecar", true),
			}},
			{version: "v1alpha3", resources: []metav1.APIResource{
				res("destinationrules", "destinationrule", "DestinationRule", true), res("envoyfilters", "envoyfilter", "EnvoyFilter", true),
			}},
		}},
		{"rbac.authorization.k8s.io", []fakeVersion{{version: "v1", resources: []metav1.APIResource{
			res("clusterroles", "clusterrole", "ClusterRole", false),
		}}}},
		{"metrics.k8s.io", []fakeVersion{{version: "v1beta1", broken: true, resources: []metav1.APIResource{
			res("pods", "", "PodMetrics", true, "get", "list"),
		}}}},
	}}
}

// TestDiscoveryLikeClientGo checks that labrun's discovery and REST mapper answer as client-go's
// DeferredDiscoveryRESTMapper and ServerPreferredResources do, in both discovery formats,
// before and after a reset that finds a new group.
func TestDiscoveryLikeClientGo(t *testing.T) {
	for _, legacyOnly := range []bool{false, true} {
		name := "aggregated"
		if legacyOnly {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			f := newFakeDiscovery()
			f.legacyOnly = legacyOnly
			srv := httptest.NewServer(f)
			defer srv.Close()
			ctx := context.Background()
			cfg := &rest.Config{Host: srv.URL, QPS: -1}

			rc, err := newDiscoveryClient(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ours := newRESTMapper(rc)
			dc, err := discovery.NewDiscoveryClientForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			theirs := restmapper.NewDeferredDiscoveryRESTMapperWithContext(memory.NewMemCacheClientWithContext(discovery.ToDiscoveryInterfaceWithContext(dc)))

			compare := func(when string) {
				t.Helper()
				gks := []struct {
					gk       k8sschema.GroupKind
					versions []string
				}{
					{k8sschema.GroupKind{Kind: "Pod"}, nil},
					{k8sschema.GroupKind{Kind: "Namespace"}, []string{"v1"}},
					{k8sschema.GroupKind{Group: "apps", Kind: "Deployment"}, []string{"v1"}},
					{k8sschema.GroupKind{Group: "apps", Kind: "Deployment"}, []string{"v1beta1"}},
					{k8sschema.GroupKind{Group: "networking.istio.io", Kind: "DestinationRule"}, nil},
					{k8sschema.GroupKind{Group: "networking.istio.io", Kind: "DestinationRule"}, []string{"v1alpha3"}},
					{k8sschema.GroupKind{Group: "networking.istio.io", Kind: "EnvoyFilter"}, nil},
					{k8sschema.GroupKind{Group: "networking.istio.io", Kind: "Sidecar"}, []string{"v1beta1"}},
					{k8sschema.GroupKind{Group: "networking.istio.io", Kind: "Sidecar"}, []string{"v1"}},
					{k8sschema.GroupKind{Group: "metrics.k8s.io", Kind: "PodMetrics"}, []string{"v1beta1"}},
					{k8sschema.GroupKind{Group: "lab.io", Kind: "Widget"}, []string{"v1"}},
					{k8sschema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, []string{"v1"}},
					{k8sschema.GroupKind{Kind: "Binding"}, []string{"v1"}},
				}
				for _, c := range gks {
					want, werr := theirs.RESTMappingWithContext(ctx, c.gk, c.versions...)
					got, gerr := ours.RESTMappingWithContext(ctx, c.gk, c.versions...)
					if (werr == nil) != (gerr == nil) || meta.IsNoMatchError(werr) != meta.IsNoMatchError(gerr) {
						t.Errorf("%s: RESTMapping(%v, %v): error %v, client-go %v", when, c.gk, c.versions, gerr, werr)
						continue
					}
					if werr != nil {
						if werr.Error() != gerr.Error() {
							t.Errorf("%s: RESTMapping(%v, %v): error %q, client-go %q", when, c.gk, c.versions, gerr, werr)
						}
						continue
					}
					if got.Resource != want.Resource || got.GroupVersionKind != want.GroupVersionKind || got.Scope.Name() != want.Scope.Name() {
						t.Errorf("%s: RESTMapping(%v, %v) = %v %v %v, client-go %v %v %v", when, c.gk, c.versions,
							got.Resource, got.GroupVersionKind, got.Scope.Name(), want.Resource, want.GroupVersionKind, want.Scope.Name())
					}
				}
				for _, r := range []string{"pod", "deployment", "destinationrule", "envoyfilter", "sidecar", "namespace", "widget", "podmetrics", "scale", "ingress"} {
					gvr := k8sschema.GroupVersionResource{Resource: r}
					want, werr := theirs.KindForWithContext(ctx, gvr)
					got, gerr := ours.KindForWithContext(ctx, gvr)
					if got != want || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
						t.Errorf("%s: KindFor(%s) = %v, %v; client-go %v, %v", when, r, got, gerr, want, werr)
					}
				}
				wantPref, werr := dc.ServerPreferredResources()
				gotPref, gerr := preferredResources(ctx, rc)
				if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
					t.Errorf("%s: preferred resources: error %v, client-go %v", when, gerr, werr)
				}
				if g, w := prefSummary(gotPref), prefSummary(wantPref); !reflect.DeepEqual(g, w) {
					t.Errorf("%s: preferred resources\n%v\nclient-go\n%v", when, g, w)
				}
			}
			compare("first")

			// A CRD applied by an earlier step: found after a reset only, as with client-go.
			f.set(func() {
				f.groups = append(f.groups, fakeGroup{"lab.io", []fakeVersion{{version: "v1", resources: []metav1.APIResource{
					res("widgets", "widget", "Widget", false),
				}}}})
			})
			widget := k8sschema.GroupKind{Group: "lab.io", Kind: "Widget"}
			if _, err := ours.RESTMappingWithContext(ctx, widget, "v1"); !meta.IsNoMatchError(err) {
				t.Errorf("before reset: Widget: %v, want no match (discovery is kept until reset)", err)
			}
			ours.ResetWithContext(ctx)
			theirs.ResetWithContext(ctx)
			compare("after reset")
			if m, err := ours.RESTMappingWithContext(ctx, widget, "v1"); err != nil || m.Resource.Resource != "widgets" || m.Scope.Name() != meta.RESTScopeNameRoot {
				t.Errorf("after reset: Widget: %v, %v", m, err)
			}
		})
	}
}

func prefSummary(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			out = append(out, l.GroupVersion+" "+r.Name+" "+r.Kind+" "+strings.Join(r.Verbs, ","))
		}
		if len(l.APIResources) == 0 {
			out = append(out, l.GroupVersion+" (none)")
		}
	}
	slices.Sort(out)
	return out
}

// TestParameterCodec checks that labrun's scheme encodes the options of its requests as
// client-go's kubernetes/scheme does (the exec URL's query, the log stream's).
func TestParameterCodec(t *testing.T) {
	rc, err := newClients(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	u := rc.CoreV1().RESTClient().Post().Resource("pods").Namespace("lab").Name("p").SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "istio-proxy", Command: []string{"pilot-agent", "request"}, Stdout: true, Stderr: true}, kubeTypes().params).URL()
	if want := "/api/v1/namespaces/lab/pods/p/exec?command=pilot-agent&command=request&container=istio-proxy&stderr=true&stdout=true"; u.RequestURI() != want {
		t.Errorf("exec URL %s, want %s", u.RequestURI(), want)
	}
	req := rc.CoreV1().Pods("lab").GetLogs("p", &corev1.PodLogOptions{Container: "istio-proxy", Timestamps: true})
	if want := "/api/v1/namespaces/lab/pods/p/log?container=istio-proxy&timestamps=true"; req.URL().RequestURI() != want {
		t.Errorf("logs URL %s, want %s", req.URL().RequestURI(), want)
	}
}

// TestClientsLikeClientGo checks that labrun's clients send what client-go's typed clients
// send for each call labrun makes: method, path, query, Accept, Content-Type and body.
func TestClientsLikeClientGo(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s accept=%q content-type=%q body=%x", r.Method, r.URL.RequestURI(),
			r.Header.Get("Accept"), r.Header.Get("Content-Type"), body))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/pods"):
			_, _ = io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"p"}}]}`)
		case strings.Contains(r.URL.Path, "/deployments/"):
			_, _ = io.WriteString(w, `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"}}`)
		case strings.Contains(r.URL.Path, "/configmaps/"):
			_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"coredns"},"data":{"Corefile":"x"}}`)
		case strings.HasSuffix(r.URL.Path, "/log"):
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "a line\n")
		default:
			_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`)
		}
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, QPS: -1, UserAgent: "labrun"}
	ctx := context.Background()
	record := func(calls func()) []string {
		mu.Lock()
		seen = nil
		mu.Unlock()
		calls()
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	grace := int64(3)
	logOpts := &corev1.PodLogOptions{Container: "istio-proxy", Timestamps: true}
	patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"a":"b"}}}}}`)
	ours, err := newClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := record(func() {
		_, err := ours.CoreV1().Pods("lab").Get(ctx, "p", getOpts)
		check("pods get", err)
		l, err := ours.CoreV1().Pods("lab").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		check("pods list", err)
		if err == nil && (len(l.Items) != 1 || l.Items[0].Name != "p") {
			t.Errorf("pods list: %v", l.Items)
		}
		check("pods delete", ours.CoreV1().Pods("lab").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &grace}))
		rc, err := ours.CoreV1().Pods("lab").GetLogs("p", logOpts).Stream(ctx)
		check("logs", err)
		if err == nil {
			rc.Close()
		}
		cm, err := ours.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", getOpts)
		check("configmaps get", err)
		if err == nil && cm.Data["Corefile"] != "x" {
			t.Errorf("configmap data %v", cm.Data)
		}
		_, err = ours.AppsV1().Deployments("lab").Get(ctx, "web", getOpts)
		check("deployments get", err)
		_, err = ours.AppsV1().Deployments("lab").Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		check("deployments patch", err)
	})
	theirs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := record(func() {
		_, _ = theirs.CoreV1().Pods("lab").Get(ctx, "p", getOpts)
		_, _ = theirs.CoreV1().Pods("lab").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		_ = theirs.CoreV1().Pods("lab").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &grace})
		if rc, err := theirs.CoreV1().Pods("lab").GetLogs("p", logOpts).Stream(ctx); err == nil {
			rc.Close()
		}
		_, _ = theirs.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", getOpts)
		_, _ = theirs.AppsV1().Deployments("lab").Get(ctx, "web", getOpts)
		_, _ = theirs.AppsV1().Deployments("lab").Patch(ctx, "web", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n%s\nclient-go's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMappingOfShortNames: a get's kind may be a built-in resource's short name, as kubectl
// takes it (deploy, cm, po), which vet checks the fields of as that kind's
// (kubeshape.Builtin); the REST mapper knows no short name, and the step erred "the API server
// serves no kind "deploy"". With apiVersion too; a name that is no kind still errs.
func TestMappingOfShortNames(t *testing.T) {
	srv := httptest.NewServer(newFakeDiscovery())
	defer srv.Close()
	rc, err := newDiscoveryClient(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{mapper: newRESTMapper(rc)}
	ctx := context.Background()
	for _, c := range []struct{ kind, apiVersion, want string }{
		{"deploy", "", "Deployment"},
		{"deploy", "apps/v1", "Deployment"},
		{"cm", "", "ConfigMap"},
		{"po", "v1", "Pod"},
		{"Pod", "", "Pod"},
	} {
		m, err := d.mappingFor(ctx, c.kind, c.apiVersion)
		if err != nil || m.kind != c.want {
			t.Errorf("mappingFor(%s, %q) = %q, %v; want %s", c.kind, c.apiVersion, m.kind, err, c.want)
		}
	}
	if _, err := d.mappingFor(ctx, "dpl", ""); err == nil || !strings.Contains(err.Error(), `serves no kind "dpl"`) {
		t.Errorf("mappingFor(dpl): %v, want no such kind", err)
	}
}
