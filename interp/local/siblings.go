package local

import (
	"net/http"

	"fortio.org/fortio/fhttp"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/interp/envoy"
	"labrun.dev/labrun/interp/fortio"
)

// This file is the only one that calls the sibling drivers interp/envoy (pure parsers of
// Envoy admin output) and interp/fortio (the load generator), and fortio itself, so that the
// rest of the package reads as the local target's own logic.

// echo is fortio's echo handler (?status=, ?size=, ?header=, ?close=, ...; ?delay= is the
// backend's own, see backend).
//
// TODO: fortio logs through its own logger, which interp/fortio quiets on the first load only;
// an echo error before that (e.g. a client that resets mid-response) prints to stderr. Switch to
// an interp/fortio export (EchoHandler or Quiet) when there is one, and drop the fhttp import.
func echo(w http.ResponseWriter, r *http.Request) { fhttp.EchoHandler(w, r) }

func clusterStats(text []byte, cluster string) (map[string]float64, error) {
	return envoy.ClusterStats(text, cluster)
}

func clusterHistograms(text []byte, cluster string) (map[string]float64, error) {
	return envoy.ClusterHistograms(text, cluster)
}

func prometheusStats(data []byte) (counters, gauges map[string]float64, err error) {
	return envoy.Prometheus(data)
}

func clusterHosts(data []byte, cluster string) ([]dsl.Host, error) {
	return envoy.Clusters(data, cluster)
}

func dumpCluster(dump []byte, name string) (map[string]any, error) {
	return envoy.DumpCluster(dump, name)
}
func dumpListener(dump []byte, name string) (map[string]any, error) {
	return envoy.DumpListener(dump, name)
}
func dumpRoute(dump []byte, name string) (map[string]any, error) { return envoy.DumpRoute(dump, name) }

func queryPath(v any, path string) (any, error) { return envoy.Query(v, path) }

func statsFilter(cluster string) string { return envoy.StatsFilter(cluster) }

func newLoadGenerator() interp.LoadGenerator { return fortio.New() }
