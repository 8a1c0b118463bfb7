package fortio

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"fortio.org/fortio/fnet"
)

// TestEchoHandler checks that EchoHandler is fortio's echo handler and that handing it out tames
// fortio's globals, the DNS resolve method included (examples/local_dns_multi.cue shows what
// fortio's default method would do to a flip; it fails with "cached-rr").
func TestEchoHandler(t *testing.T) {
	h := EchoHandler()
	if got := fnet.FlagResolveMethod.Get(); got != resolveMethod {
		t.Errorf("fnet.FlagResolveMethod = %q after EchoHandler, want %q", got, resolveMethod)
	}
	for query, want := range map[string]int{"": http.StatusOK, "?status=503": http.StatusServiceUnavailable} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/echo"+query, nil))
		if rec.Code != want {
			t.Errorf("GET /echo%s: %d, want %d", query, rec.Code, want)
		}
	}
}
