package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	restclient "k8s.io/client-go/rest"
	clientremote "k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
)

// spdyExecutor runs a command over SPDY with the v4 exec protocol (v4.channel.k8s.io), the
// fallback for an API server that does not upgrade an exec to WebSocket v5, and tells a
// stream that ended with the command's status from one that ended without
// (errNoExitStatus), as wsExecutor does: client-go's SPDY executor reads an error stream that
// closed empty as Success, exit 0. Under v4 the kubelet writes a status whatever the command
// did (Success included), so an empty one is a cut-off stream, never a success. Each of
// stdin, stdout, stderr and the status is a stream of its own, named by its streamType
// header; the status stream is created first, as client-go does.
type spdyExecutor struct {
	cfg *restclient.Config
	url string
}

var _ clientremote.Executor = (*spdyExecutor)(nil)

func (e *spdyExecutor) Stream(opts clientremote.StreamOptions) error {
	return e.StreamWithContext(context.Background(), opts)
}

func (e *spdyExecutor) StreamWithContext(ctx context.Context, opts clientremote.StreamOptions) error {
	rt, upgrader, err := spdy.RoundTripperFor(e.cfg)
	if err != nil {
		return fmt.Errorf("spdy transport: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, nil)
	if err != nil {
		return err
	}
	conn, protocol, err := spdy.Negotiate(upgrader, &http.Client{Transport: rt}, req, remotecommand.StreamProtocolV4Name)
	if err != nil {
		return err
	}
	defer conn.Close()
	if protocol != remotecommand.StreamProtocolV4Name {
		// An older protocol's status is plain text or absent on success: it could not tell
		// a cut-off stream from a success.
		return fmt.Errorf("the API server chose exec protocol %q over SPDY; labrun speaks %s, whose status it requires", protocol, remotecommand.StreamProtocolV4Name)
	}
	// Cancelling ctx closes the connection, which ends every copy below.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	headers := http.Header{}
	create := func(typ string) (io.ReadWriteCloser, error) {
		headers.Set(corev1.StreamType, typ)
		s, err := conn.CreateStream(headers)
		if err != nil {
			return nil, fmt.Errorf("exec %s stream: %w", typ, err)
		}
		return s, nil
	}
	statusStream, err := create(corev1.StreamTypeError)
	if err != nil {
		return err
	}
	var stdin, stdout, stderr io.ReadWriteCloser
	if opts.Stdin != nil {
		if stdin, err = create(corev1.StreamTypeStdin); err != nil {
			return err
		}
	}
	if opts.Stdout != nil {
		if stdout, err = create(corev1.StreamTypeStdout); err != nil {
			return err
		}
	}
	if opts.Stderr != nil {
		if stderr, err = create(corev1.StreamTypeStderr); err != nil {
			return err
		}
	}

	type read struct {
		status []byte
		err    error
	}
	statusRead := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(statusStream)
		statusRead <- read{b, err}
	}()
	if stdin != nil {
		go func() {
			// The stdin stream's close is the command's end of input.
			_, _ = io.Copy(stdin, opts.Stdin)
			_ = stdin.Close()
		}()
	}
	var wg sync.WaitGroup
	var writeErr error
	var writeOnce sync.Once
	copyOut := func(name string, dst io.Writer, src io.Reader) {
		defer wg.Done()
		// What a writer refused is drained: a stream left full would hold the connection.
		defer func() { _, _ = io.Copy(io.Discard, src) }()
		if _, err := io.Copy(dst, src); err != nil {
			var we *writerError
			if errors.As(err, &we) {
				writeOnce.Do(func() { writeErr = fmt.Errorf("%s: %w", name, we.err) })
			}
		}
	}
	if stdout != nil {
		wg.Add(1)
		go copyOut("stdout", &errWriter{opts.Stdout}, stdout)
	}
	if stderr != nil {
		wg.Add(1)
		go copyOut("stderr", &errWriter{opts.Stderr}, stderr)
	}
	wg.Wait()
	r := <-statusRead
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if writeErr != nil {
		return writeErr
	}
	if len(r.status) == 0 {
		if r.err != nil {
			return fmt.Errorf("%w: %w", errNoExitStatus, r.err)
		}
		return errNoExitStatus
	}
	return decodeExecStatus(r.status)
}

// errWriter marks the errors of the caller's writer, so that a copy tells them from the
// stream's own.
type errWriter struct{ w io.Writer }

type writerError struct{ err error }

func (e *writerError) Error() string { return e.err.Error() }

func (w *errWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		return n, &writerError{err}
	}
	return n, nil
}
