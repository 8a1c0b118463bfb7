package kube

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// TestExecSPDYWithoutStatusStandIn: an API server that does not upgrade an exec to WebSocket
// v5 is spoken to over SPDY, and client-go's SPDY executor reads a status stream that closed
// empty as Success: a command cut off before it said how it ended passed as exit 0, as over
// WebSocket before labrun's own executor (TestExecStreamWithoutStatusStandIn). The API server
// is a loopback stand-in that refuses the WebSocket upgrade (so the exec falls back) and
// serves the v4 exec protocol over SPDY with k8s.io/streaming's server side, the kubelet's:
// one stream per channel, named by its streamType header; it writes stdout, then Success,
// exit 3, or nothing before it closes, and echoes stdin, which ends with its stream's close.
func TestExecSPDYWithoutStatusStandIn(t *testing.T) {
	statuses := execStandInStatuses(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/exec") {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			// The WebSocket upgrade: this server does not speak it.
			http.Error(w, "no websocket here", http.StatusBadRequest)
			return
		}
		q := r.URL.Query()
		mode := q["command"][0]
		want := 2 // status, stdout
		if q.Get("stderr") == "true" {
			want++
		}
		if q.Get("stdin") == "true" {
			want++
		}
		if _, err := httpstream.Handshake(r, w, []string{remotecommand.StreamProtocolV4Name}); err != nil {
			t.Errorf("handshake: %v", err)
			return
		}
		var mu sync.Mutex
		streams := map[string]httpstream.Stream{}
		all := make(chan struct{})
		conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
			mu.Lock()
			defer mu.Unlock()
			streams[s.Headers().Get(corev1.StreamType)] = s
			if len(streams) == want {
				close(all)
			}
			return nil
		})
		if conn == nil {
			t.Errorf("upgrade failed")
			return
		}
		defer conn.Close()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: %d of %d streams created", mode, len(streams), want)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		st := statuses[mode]
		if mode == "cat" {
			in, err := io.ReadAll(streams[corev1.StreamTypeStdin])
			if err != nil {
				t.Errorf("stdin: %v", err)
			}
			_, _ = streams[corev1.StreamTypeStdout].Write(in)
			st = statuses["ok"]
		} else {
			_, _ = streams[corev1.StreamTypeStdout].Write([]byte("out of " + mode))
		}
		for _, typ := range []string{corev1.StreamTypeStdout, corev1.StreamTypeStderr} {
			if s := streams[typ]; s != nil {
				_ = s.Close()
			}
		}
		if st != nil {
			_, _ = streams[corev1.StreamTypeError].Write(st)
		}
		_ = streams[corev1.StreamTypeError].Close()
	}))
	defer srv.Close()
	d := standinDriver(t, srv.URL)
	d.streamCfg = &rest.Config{Host: srv.URL}
	checkExecStandInModes(t, d)
}
