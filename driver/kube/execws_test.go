package kube

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// TestExecStreamWithoutStatusStandIn: an exec whose stream the API server closes (a normal
// WebSocket close) without the command's status read as exit 0 through client-go's executor,
// which returns nil for an empty status channel as for Success: a command that never said how
// it ended passed as one that succeeded. The API server is a loopback stand-in serving the v5
// exec protocol with k8s.io/streaming's wsstream, the server side the API server uses; it
// writes stdout, then Success, exit 3, or nothing before it closes; and echoes stdin, which
// ends with v5's close of the stdin channel.
func TestExecStreamWithoutStatusStandIn(t *testing.T) {
	statuses := execStandInStatuses(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/exec") {
			http.NotFound(w, r)
			return
		}
		mode := r.URL.Query()["command"][0]
		conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
			remotecommand.StreamProtocolV5Name: {Binary: true, Channels: []wsstream.ChannelType{
				wsstream.ReadChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.WriteChannel, wsstream.ReadChannel}},
		})
		_, ch, err := conn.Open(w, r)
		if err != nil {
			t.Errorf("open: %v", err)
			return
		}
		defer conn.Close()
		if mode == "cat" {
			// stdin's end is v5's close of its channel: read to it, then say Success.
			in, err := io.ReadAll(ch[remotecommand.StreamStdIn])
			if err != nil {
				t.Errorf("stdin: %v", err)
			}
			_, _ = ch[remotecommand.StreamStdOut].Write(in)
			_, _ = ch[remotecommand.StreamErr].Write(statuses["ok"])
			return
		}
		_, _ = ch[remotecommand.StreamStdOut].Write([]byte("out of " + mode))
		if st := statuses[mode]; st != nil {
			_, _ = ch[remotecommand.StreamErr].Write(st)
		}
	}))
	defer srv.Close()
	d := standinDriver(t, srv.URL)
	d.streamCfg = &rest.Config{Host: srv.URL}
	checkExecStandInModes(t, d)
}

// execStandInStatuses are the statuses an exec stand-in ends its modes with: Success, exit 3,
// and none (the stream closes without one).
func execStandInStatuses(t *testing.T) map[string][]byte {
	status := func(st metav1.Status) []byte {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return map[string][]byte{
		"ok":   status(metav1.Status{Status: metav1.StatusSuccess}),
		"exit": status(metav1.Status{Status: metav1.StatusFailure, Reason: remotecommand.NonZeroExitCodeReason, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommand.ExitCodeCauseType, Message: "3"}}}}),
		"none": nil,
	}
}

// checkExecStandInModes runs each mode of an exec stand-in (the command's one word: it writes
// "out of MODE" and ends with that mode's status; cat echoes stdin) through d.stream.
func checkExecStandInModes(t *testing.T, d *driver) {
	t.Helper()
	for _, tc := range []struct {
		mode    string
		exit    int
		wantErr string
	}{
		{"ok", 0, ""},
		{"exit", 3, ""},
		{"none", 0, "without the command's exit status"},
		{"cat", 0, ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var stdin io.Reader
		if tc.mode == "cat" {
			stdin = strings.NewReader("out of cat")
		}
		r, err := d.stream(ctx, "lab", "p", "c", []string{tc.mode}, stdin)
		cancel()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: exit %d, error %v; want an error saying %q", tc.mode, r.exit, err, tc.wantErr)
			}
			continue
		}
		if err != nil || r.exit != tc.exit || string(r.stdout) != "out of "+tc.mode {
			t.Errorf("%s: exit %d, stdout %q, error %v; want exit %d, stdout %q", tc.mode, r.exit, r.stdout, err, tc.exit, "out of "+tc.mode)
		}
	}
}
