package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	gwebsocket "github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	restclient "k8s.io/client-go/rest"
	clientremote "k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/websocket"
	utilexec "k8s.io/client-go/util/exec"
)

// errNoExitStatus is an exec whose stream ended without the status the API server sends when
// the command ends (Success, or its non-zero exit code): the command's outcome is not known.
// client-go's executors read that as a success, exit 0.
var errNoExitStatus = errors.New("the exec stream ended without the command's exit status (the connection to the API server or the kubelet closed before the command's end was said): its outcome is not known, so it is not read as exit 0")

// wsExecutor runs a command over the v5 WebSocket exec protocol (v5.channel.k8s.io, the one
// client-go's WebSocket executor speaks) and tells a stream that ended with its status from
// one that ended without (errNoExitStatus): client-go's executor returns nil for both, which
// read as exit 0. Each message carries its channel first: 0 stdin, 1 stdout, 2 stderr, 3 the
// status (a metav1.Status as JSON), 255 the close of a channel (v5: stdin's end).
type wsExecutor struct {
	cfg *restclient.Config
	url string
}

var _ clientremote.Executor = (*wsExecutor)(nil)

func (e *wsExecutor) Stream(opts clientremote.StreamOptions) error {
	return e.StreamWithContext(context.Background(), opts)
}

func (e *wsExecutor) StreamWithContext(ctx context.Context, opts clientremote.StreamOptions) error {
	rt, holder, err := websocket.RoundTripperFor(e.cfg)
	if err != nil {
		return fmt.Errorf("websocket transport: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	if err != nil {
		return err
	}
	// A server that does not speak v5 fails the upgrade (an UpgradeFailureError: the
	// caller falls back to SPDY).
	conn, err := websocket.Negotiate(rt, holder, req, remotecommand.StreamProtocolV5Name)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Cancelling ctx closes the connection, which ends the read below.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	var writeMu sync.Mutex
	write := func(b []byte) error {
		writeMu.Lock()
		defer writeMu.Unlock()
		return conn.WriteMessage(gwebsocket.BinaryMessage, b)
	}
	if opts.Stdin != nil {
		go func() {
			buf := make([]byte, 32*1024)
			for {
				n, rerr := opts.Stdin.Read(buf)
				if n > 0 {
					if write(append([]byte{remotecommand.StreamStdIn}, buf[:n]...)) != nil {
						return
					}
				}
				if rerr != nil {
					_ = write([]byte{remotecommand.StreamClose, remotecommand.StreamStdIn})
					return
				}
			}
		}()
	}

	var status []byte
	var readErr error
	for {
		typ, data, err := conn.ReadMessage()
		if err != nil {
			var ce *gwebsocket.CloseError
			if !errors.As(err, &ce) || ce.Code != gwebsocket.CloseNormalClosure {
				readErr = err
			}
			break
		}
		if typ != gwebsocket.BinaryMessage || len(data) == 0 {
			continue
		}
		body := data[1:]
		switch data[0] {
		case remotecommand.StreamStdOut:
			if opts.Stdout != nil && len(body) > 0 {
				if _, err := opts.Stdout.Write(body); err != nil {
					return fmt.Errorf("stdout: %w", err)
				}
			}
		case remotecommand.StreamStdErr:
			if opts.Stderr != nil && len(body) > 0 {
				if _, err := opts.Stderr.Write(body); err != nil {
					return fmt.Errorf("stderr: %w", err)
				}
			}
		case remotecommand.StreamErr:
			status = append(status, body...)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(status) == 0 {
		if readErr != nil {
			return fmt.Errorf("%w: %w", errNoExitStatus, readErr)
		}
		return errNoExitStatus
	}
	return decodeExecStatus(status)
}

// decodeExecStatus reads the status an exec stream ends with as client-go's v4/v5 protocols do:
// Success is nil, a non-zero exit an ExitError with its code, anything else an error.
func decodeExecStatus(message []byte) error {
	var st metav1.Status
	if err := json.Unmarshal(message, &st); err != nil {
		return fmt.Errorf("exec status: %v in %q", err, string(message))
	}
	switch st.Status {
	case metav1.StatusSuccess:
		return nil
	case metav1.StatusFailure:
		if st.Reason == remotecommand.NonZeroExitCodeReason && st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Type != remotecommand.ExitCodeCauseType {
					continue
				}
				rc, err := strconv.ParseUint(c.Message, 10, 8)
				if err != nil {
					return fmt.Errorf("exec status: invalid exit code %q", c.Message)
				}
				return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", rc), Code: int(rc)}
			}
			return errors.New("exec status: a non-zero exit without its code")
		}
		if st.Message != "" {
			return errors.New(st.Message)
		}
	}
	return fmt.Errorf("exec status: %q", string(message))
}
