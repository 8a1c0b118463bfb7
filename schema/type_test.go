package schema

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

type testContext struct{ sampled bool }

func (c testContext) Sampled() bool         { return c.sampled }
func (testContext) ExpectsFailure() bool    { return false }
func (c testContext) Templated(string) bool { return false }

// TestResultsMatchTheirGoTypes: every field a kind declares is a field of the Go type its
// result has at run time (its expr tag), of a matching shape, and every expr field of that Go
// type is declared: the declaration is what expressions compile against, so a field the
// declaration misses or invents would be a field vet refuses or the run cannot read.
func TestResultsMatchTheirGoTypes(t *testing.T) {
	params := map[string][]Params{
		"snapshot": {
			&Snapshot{Envoy: &PodRef{Pod: "p"}, Cluster: "c", Hosts: true},
			&Snapshot{Backend: "a"},
			&Snapshot{Prometheus: "http://127.0.0.1:9/metrics"},
		},
	}
	for _, name := range KindNames() {
		ps := params[name]
		if ps == nil {
			ps = []Params{Kinds[name].New()}
		}
		for _, p := range ps {
			for _, sampled := range []bool{false, true} {
				typ := ResultOf(p, testContext{sampled})
				if typ == nil {
					continue
				}
				checkGoType(t, name, typ, typ.Go)
			}
		}
	}
}

func checkGoType(t *testing.T, path string, typ *Type, gt reflect.Type) {
	t.Helper()
	if gt == nil {
		return
	}
	kinds := map[TypeKind][]reflect.Kind{
		TNumber: {reflect.Float64, reflect.Int}, TString: {reflect.String}, TBool: {reflect.Bool},
		TMap: {reflect.Map}, TList: {reflect.Slice}, TStruct: {reflect.Struct}, TStats: {reflect.Map},
	}
	if typ.Kind != TAny && !slices.Contains(kinds[typ.Kind], gt.Kind()) {
		t.Errorf("%s: declared %s, Go type %s", path, typ, gt)
		return
	}
	switch typ.Kind {
	case TList:
		checkGoType(t, path+"[]", typ.Elem, gt.Elem())
	case TMap:
		checkGoType(t, path+"{}", typ.Elem, gt.Elem())
	case TStruct:
		tags := map[string]reflect.Type{}
		for i := range gt.NumField() {
			f := gt.Field(i)
			if tag := f.Tag.Get("expr"); tag != "" && tag != "-" { // "-": hidden from expressions
				tags[tag] = f.Type
			}
		}
		var declared []string
		for _, f := range typ.Fields {
			declared = append(declared, f.Name)
			ft, ok := tags[f.Name]
			if !ok && f.Read != "" {
				// Read computes it from the struct when an expression reads it (a load's
				// errorLatency): the function's value has the declared shape.
				checkGoType(t, path+"."+f.Name, f.Type, f.Type.Go)
				continue
			}
			if !ok {
				t.Errorf("%s.%s: declared, but %s has no field tagged expr:%q", path, f.Name, gt, f.Name)
				continue
			}
			if f.Doc == "" || strings.Contains(f.Doc, "\n") {
				t.Errorf("%s.%s: a field needs one sentence of doc", path, f.Name)
			}
			checkGoType(t, path+"."+f.Name, f.Type, ft)
		}
		for tag := range tags {
			if !slices.Contains(declared, tag) {
				t.Errorf("%s: %s has the expr field %q, which the kind does not declare", path, gt, tag)
			}
		}
	}
}

// TestBackendCatalogue: the local backend's catalogue is closed, knows its families and
// tells counters from gauges.
func TestBackendCatalogue(t *testing.T) {
	for name, want := range map[string]StatKind{
		"rq_total": Counter, "rq_503": Counter, "rq_2xx": Counter, "cx_active": Gauge,
		"http.downstream_rq_active": Gauge, "http.downstream_rq_total": Counter,
	} {
		s, ok := BackendStats.Lookup(name)
		if !ok || s.Kind != want {
			t.Errorf("%s: %v %v, want a %s", name, s.Kind, ok, want)
		}
	}
	for _, name := range []string{"rq_totl", "http.downstream_rq_503", "rq_99", "upstream_rq_total"} {
		if _, ok := BackendStats.Lookup(name); ok {
			t.Errorf("%s: known to a local backend", name)
		}
	}
	if !BackendStats.Closed {
		t.Error("the local backend's catalogue is open")
	}
}

// TestEnvoyCatalogue: the Envoy cluster catalogue knows Envoy's families, quantiles of its
// histograms, and where the stats of other scopes live.
func TestEnvoyCatalogue(t *testing.T) {
	c := EnvoyClusterStats
	for name, want := range map[string]StatKind{
		"upstream_rq_pending_overflow": Counter, "upstream_rq_503": Counter, "upstream_rq_5xx": Counter,
		"upstream_cx_active": Gauge, "circuit_breakers.default.rq_pending_open": Gauge,
		"circuit_breakers.high.remaining_rq": Gauge, "outlier_detection.ejections_active": Gauge,
		"outlier_detection.ejections_enforced_total": Counter, "membership_healthy": Gauge,
		"upstream_rq_time.p99": Histogram, "upstream_cx_connect_ms.p999": Histogram,
		"retry.upstream_rq_503": Counter, "internal.upstream_rq_2xx": Counter,
		"zone.a.b.upstream_rq_200": Counter, "http2.streams_active": Gauge, "ssl.handshake": Counter,
	} {
		s, ok := c.Lookup(name)
		if !ok || s.Kind != want {
			t.Errorf("%s: %v %v, want a %s", name, s.Kind, ok, want)
		}
	}
	for _, name := range []string{"upstream_rq_totl", "rq_total", "upstream_rq_time.p99x"} {
		if _, ok := c.Lookup(name); ok {
			t.Errorf("%s: known to an Envoy cluster", name)
		}
	}
	if !c.IsHistogram("upstream_rq_time") || c.IsHistogram("upstream_rq_total") {
		t.Error("IsHistogram")
	}
	if w := c.Elsewhere("downstream_rq_total"); !strings.Contains(w, "HTTP connection manager") {
		t.Errorf("downstream_rq_total lives in %q", w)
	}
	names := c.Names()
	if !sort.StringsAreSorted(names) || !slices.Contains(names, "upstream_rq_503") || !slices.Contains(names, "upstream_rq_time.p99") {
		t.Errorf("Names: %v", names)
	}
}

// TestOfSource: a snapshot read back from its source has the source's family and catalogue.
func TestOfSource(t *testing.T) {
	for _, p := range []*Snapshot{
		{Envoy: &PodRef{Pod: "client", Namespace: "lab"}, Cluster: "outbound|8080||b.lab.svc.cluster.local"},
		{Admin: "http://127.0.0.1:15000", Cluster: "c"},
		{Prometheus: "http://127.0.0.1:9/metrics"},
		{Backend: "a"},
	} {
		got := OfSource(p.Source())
		if got == nil || got.Family() != p.Family() || got.Catalogue() != p.Catalogue() || got.Cluster != p.Cluster {
			t.Errorf("OfSource(%q) = %+v, want the family %s", p.Source(), got, p.Family())
		}
	}
	if OfSource("nonsense") != nil {
		t.Error("OfSource of an unknown source")
	}
}
