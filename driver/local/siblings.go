package local

import (
	"net/http"
	"sync"

	"labrun.dev/labrun/driver/fortio"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

// This file is the only one that calls the sibling drivers envoy (pure parsers of
// Envoy admin output) and driver/fortio (the load generator and fortio's echo handler), so that
// the rest of the package reads as the local target's own logic. fortio itself is imported by
// driver/fortio only.

// echoHandler is fortio's echo handler as driver/fortio hands it out: fortio's globals (its
// logger above all) are tamed before the first request is answered, so an echo error (a client
// that resets mid-response) never prints to stderr, even before the first load.
var echoHandler = sync.OnceValue(fortio.EchoHandler)

// echo answers with fortio's echo handler (?status=, ?size=, ?header=, ?close=, ...; ?delay= is
// the backend's own, see backend).
func echo(w http.ResponseWriter, r *http.Request) { echoHandler().ServeHTTP(w, r) }

func clusterStats(text []byte, cluster string) (map[string]float64, error) {
	return envoy.ClusterStats(text, cluster)
}

func clusterHistograms(text []byte, cluster string) (map[string]float64, error) {
	return envoy.ClusterHistograms(text, cluster)
}

func prometheusStats(data []byte) (counters, gauges map[string]float64, err error) {
	return envoy.Prometheus(data)
}

func clusterHosts(data []byte, cluster string) ([]schema.Host, error) {
	return envoy.Clusters(data, cluster)
}

func dumpCluster(dump []byte, name string) (map[string]any, error) {
	return envoy.DumpCluster(dump, name)
}
func dumpListener(dump []byte, name string) (map[string]any, error) {
	return envoy.DumpListener(dump, name)
}
func dumpRoute(dump []byte, name string) (map[string]any, error) { return envoy.DumpRoute(dump, name) }

func statsFilter(cluster string) string { return envoy.StatsFilter(cluster) }

func newLoadGenerator() schema.LoadGenerator { return fortio.New() }
