package report_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestClustersInReport: a run across clusters names each cluster and what it reached, and the
// steps table has a cluster column; a run on one cluster has neither.
func TestClustersInReport(t *testing.T) {
	rec := sampleRecord()
	one := report.Markdown(rec, report.Files{})
	if strings.Contains(one, "| cluster |") || strings.Contains(one, "cluster east") {
		t.Errorf("a one-cluster run shows clusters:\n%s", one)
	}
	rec.Clusters = []interp.ClusterRecord{{Name: "east", Where: "context east (https://127.0.0.1:1)"}, {Name: "west", Where: "context west (https://127.0.0.1:2)"}}
	for i, s := range rec.Steps {
		s.Cluster = []string{"east", "west"}[i%2]
	}
	for name, page := range map[string]string{"md": report.Markdown(rec, report.Files{}), "html": report.HTML(rec, report.Files{})} {
		for _, want := range []string{"cluster east", "context west (https://127.0.0.1:2)", "cluster"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: no %q", name, want)
			}
		}
	}
	md := report.Markdown(rec, report.Files{})
	if !strings.Contains(md, "| step | cluster | kind |") || !strings.Contains(md, "| fortio | west | load |") {
		t.Errorf("steps table without the cluster column:\n%s", md)
	}
}
