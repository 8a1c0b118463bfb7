package kube

// End-to-end test against the sandbox's real kube-apiserver: a write whose answer is lost.

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/schema"
)

// loseAnswers is a stand-in for a connection lost, or a request cancelled by an interrupt,
// after the API server received a write: while lose holds, a PATCH or POST of a ConfigMap is
// sent on, and its answer dropped.
type loseAnswers struct {
	next http.RoundTripper
	lose *atomic.Bool
}

func (l loseAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if l.lose.Load() && (r.Method == http.MethodPatch || r.Method == http.MethodPost) && strings.Contains(r.URL.Path, "/configmaps") {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, errors.New("stand-in: the connection was lost before the answer came")
	}
	return resp, err
}

// TestE2EApplyAnswerLost: an object that did not exist, whose apply (or create) reached the
// API server but got no answer, is in ApplyResult.Unsure, so that the run's cleanup deletes
// it: before, it was in neither Created nor Unsure, and an interrupt during an apply left the
// object (a run's namespace) behind. A write the server refused is not unsure.
func TestE2EApplyAnswerLost(t *testing.T) {
	var lose atomic.Bool
	l := newLab(t, "e2e-lost", func(o *Options) {
		o.wrapTransport = func(rt http.RoundTripper) http.RoundTripper { return loseAnswers{rt, &lose} }
	})
	lose.Store(true)
	for _, mode := range []string{"apply", "create"} {
		name := "lost-" + mode
		res, err := l.tgt.Cluster.ApplyWith(l.ctx, []schema.Object{configMap(name, nil, map[string]any{"k": "v"})}, nil, l.ns, schema.ApplyOptions{Mode: mode})
		if err == nil {
			t.Fatalf("%s: no error, want the lost answer's", mode)
		}
		if len(res.Created) != 0 || len(res.Unsure) != 1 || res.Unsure[0].Name != name {
			t.Errorf("%s: created %v, unsure %v; want %s unsure", mode, res.Created, res.Unsure, name)
		}
		cm, gerr := l.cs.CoreV1().ConfigMaps(l.ns).Get(l.ctx, name, metav1.GetOptions{})
		if gerr != nil {
			t.Fatalf("%s: the API server did not create it (the stand-in must send the write on): %v", mode, gerr)
		}
		if cm.Labels[LabelRun] == "" {
			t.Errorf("%s: created without the run's mark: %v", mode, cm.Labels)
		}
		if err := l.tgt.Cluster.Delete(l.ctx, res.Unsure, true); err != nil {
			t.Errorf("%s: deleting the unsure object: %v", mode, err)
		}
		if _, gerr := l.cs.CoreV1().ConfigMaps(l.ns).Get(l.ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(gerr) {
			t.Errorf("%s: still there after its cleanup: %v", mode, gerr)
		}
	}
	lose.Store(false)
	// Refused by the server (an unknown field, strict validation): an answer came, nothing was made.
	bad := configMap("refused", nil, map[string]any{"k": "v"})
	bad["spec"] = map[string]any{"x": 1}
	res, err := l.tgt.Cluster.ApplyWith(l.ctx, []schema.Object{bad}, nil, l.ns, schema.ApplyOptions{})
	if err == nil || len(res.Unsure) != 0 || len(res.Created) != 0 {
		t.Errorf("refused: err %v, created %v, unsure %v; want an error and neither", err, res.Created, res.Unsure)
	}
}
