package envoy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

func TestClusters(t *testing.T) {
	text := readFixture(t, "clusters.txt")
	js := readFixture(t, "clusters.json")
	connLabHosts := []schema.Host{
		{Address: "10.244.1.5:8080", CxActive: 1, CxTotal: 3, RqActive: 1, RqTotal: 40, RqError: 12,
			Healthy: true, Health: "healthy", Weight: 1},
		{Address: "10.244.1.12:8080", CxFail: 6, CxTotal: 6, RqTotal: 6, RqError: 6,
			Healthy: false, Health: "/failed_outlier_check", Weight: 1},
	}
	tests := []struct {
		name    string
		cluster string
		text    []schema.Host // want from the text form
		json    []schema.Host // want from the JSON form, if it differs
	}{
		{name: "two hosts, one ejected, sorted numerically", cluster: connLab, text: connLabHosts},
		{name: "other namespace", cluster: serviceA, text: []schema.Host{
			{Address: "10.244.2.7:8080", CxActive: 4, CxTotal: 17, RqTotal: 1000, Healthy: true, Health: "healthy", Weight: 1}}},
		{name: "ipv6", cluster: "outbound|443||kubernetes.default.svc.cluster.local",
			text: []schema.Host{{Address: "[fd00:10:96::1]:6443", Healthy: true, Health: "healthy", Weight: 1}},
			json: []schema.Host{{Address: "[fd00:10:96::1]:6443", Healthy: false, Health: "/degraded_eds_health", Weight: 1}}},
		{name: "no hosts", cluster: "BlackHoleCluster", text: []schema.Host{}},
		{name: "pipe", cluster: "xds-grpc", text: []schema.Host{
			{Address: "./etc/istio/proxy/XDS", CxActive: 1, CxTotal: 1, Healthy: true, Health: "healthy", Weight: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Clusters(text, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.text) {
				t.Errorf("text:\n got %+v\nwant %+v", got, tt.text)
			}
			want := tt.json
			if want == nil {
				want = tt.text
			}
			got, err = Clusters(js, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("json:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestClustersNotFound(t *testing.T) {
	for _, f := range []string{"clusters.txt", "clusters.json"} {
		_, err := Clusters(readFixture(t, f), "outbound|8080||backend")
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: err %v, want ErrNotFound", f, err)
		}
		msg := err.Error()
		i := strings.Index(msg, connLab)
		j := strings.Index(msg, serviceA)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s: %s: want %s named first", f, msg, connLab)
		}
	}
	if _, err := Clusters(nil, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty input: %v", err)
	}
	if _, err := Clusters([]byte("{}"), ""); err == nil {
		t.Error("no cluster name: no error")
	}
	if _, err := Clusters([]byte("{bad json"), "x"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("bad json: %v", err)
	}
}

func TestClustersText(t *testing.T) {
	data := "c::10.0.0.2:80::cx_active::1\r\n" +
		"c::10.0.0.10:80::health_flags::/failed_active_hc/failed_outlier_check\r\n" +
		"c::10.0.0.10:80::hostname::backend-0.backend.ns.svc.cluster.local\r\n" +
		"c::envoy://connect_originate/10.0.0.3:80::cx_active::2\n" +
		"c::envoy://connect_originate/10.0.0.3:80::health_flags::healthy\n" +
		"c::10.0.0.2:80::health_flags::/pending_dynamic_removal\n" +
		"c::10.0.0.2:80::cx_total::not-a-number\n" +
		"c::10.0.0.2:80\n" +
		"cc::10.0.0.9:80::cx_active::9\n" +
		"c.x::10.0.0.8:80::cx_active::9\n"
	got, err := Clusters([]byte(data), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.Host{
		{Address: "10.0.0.2:80", CxActive: 1, Healthy: true, Health: "/pending_dynamic_removal"},
		{Address: "10.0.0.10:80", Hostname: "backend-0.backend.ns.svc.cluster.local", Health: "/failed_active_hc/failed_outlier_check"},
		{Address: "envoy://connect_originate/10.0.0.3:80", CxActive: 2, Healthy: true, Health: "healthy"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestClustersTextNoHealthFlags: Envoy writes health_flags for every host of /clusters; a host
// without it (output cut short) read as not healthy, Health "", and none(s.hosts, .healthy)
// held of a host whose health nobody read. It errs, naming the host. The text is a stand-in
// written in Envoy's /clusters form.
func TestClustersTextNoHealthFlags(t *testing.T) {
	data := "c::10.0.0.1:80::cx_active::0\nc::10.0.0.1:80::health_flags::healthy\nc::10.0.0.2:80::cx_active::0\n"
	if _, err := Clusters([]byte(data), "c"); err == nil || !strings.Contains(err.Error(), "host 10.0.0.2:80 of cluster \"c\" has no health_flags line") {
		t.Errorf("got %v, want an error naming host 10.0.0.2:80", err)
	}
}

func TestJSONHealthFlags(t *testing.T) {
	data := `{"cluster_statuses":[{"name":"c","host_statuses":[
	 {"address":{"socket_address":{"address":"10.0.0.1","port_value":80}},"health_status":{"failed_active_health_check":true,"failed_outlier_check":true,"eds_health_status":"UNHEALTHY"}},
	 {"address":{"socket_address":{"address":"10.0.0.2","port_value":"81"}},"health_status":{"pending_dynamic_removal":true},"weight":"3"},
	 {"address":{"envoy_internal_address":{"server_listener_name":"connect_originate","endpoint_id":"10.0.0.3:80"}},"health_status":{"eds_health_status":"DRAINING"}}
	]}]}`
	got, err := Clusters([]byte(data), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.Host{
		{Address: "10.0.0.1:80", Health: "/failed_active_hc/failed_outlier_check/failed_eds_health"},
		{Address: "10.0.0.2:81", Healthy: true, Health: "/pending_dynamic_removal", Weight: 3},
		{Address: "envoy://connect_originate/10.0.0.3:80", Health: "/eds_status_draining"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestClosest(t *testing.T) {
	got := closest("outbound|8080||backend", []string{"xds-grpc", serviceA, "BlackHoleCluster", connLab, "outbound|8080||backend2", connLab})
	want := []string{"outbound|8080||backend2", connLab, serviceA, "xds-grpc", "BlackHoleCluster"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
