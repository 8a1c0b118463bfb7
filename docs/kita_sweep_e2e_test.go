package docs_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/sandbox"
)

// kitASweepDoc is Kit A's DestinationRule sweep: maxConnections × http1MaxPendingRequests.
const kitASweepDoc = "kit-a-sweep.md"

// TestKitASweepDocInSandbox is `labrun doc --target kube docs/kit-a-sweep.md` against the
// sandbox: its scenario declares a sweep, so each of the six combinations runs on its own (the
// kit's setup, the DR with the combination's fields, the wait until the sidecar's cluster
// carries it, the cleanup), and the document's expected block must equal the summary.
//
// Real: the Kubernetes API server, kwok, Istio's CRDs and istiod (see TestKitADocInSandbox): the
// thresholds the config step reads are istiod's own translation of each swept DR. Nothing is
// replayed: there is no load and no counter, so no Envoy stand-in is needed.
//
// LABRUN_UPDATE=1 runs `labrun doc --update` instead, rewriting the expected block from the run.
func TestKitASweepDocInSandbox(t *testing.T) {
	sb := sandbox.Start(t)
	out, _, _ := docInSandbox(t, sb, kitASweepDoc)
	if !strings.Contains(out, "SUMMARY kita_dr_sweep: 6 of 6 runs passed") {
		t.Errorf("no summary line saying that the six combinations passed")
	}
	if n := strings.Count(out, "PASSED kita_dr_sweep "); n != 6 {
		t.Errorf("%d PASSED lines for kita_dr_sweep, want one per combination (6)", n)
	}
}
