package local

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"labrun.dev/labrun/schema"
)

// A local target's echo backends run in a process of their own, the backend host, when
// Options.BackendHost names the command that serves them (labrun runs itself with a hidden
// argument): the load generator and the backends then have a Go runtime each, so a backend's
// latency under load is the backend's, not that of labrun's own scheduling (BENCHMARKS.md,
// "driver/local — backends in a process of their own"). Without it they run in this process.
//
// The protocol, on the host's stdin and stdout, one JSON value per line: labrun writes the
// backends' specs ({"a": {"address": …}}); the host answers with their addresses
// ({"addrs": {"a": "127.0.0.2:18480"}}) or an error ({"error": "…"}). Then each line labrun
// writes is a backend's name, and the host answers with its stats ({"counters": …,
// "gauges": …}): the read is no request to the backend, so it counts nothing. The host's
// stderr is its log. When its stdin ends (labrun closed it, or died) it closes its backends,
// waiting for open connections as an in-process backend does, and exits; labrun starts it
// with SIGKILL as its parent-death signal besides.

// backendRef is a backend as the drivers see it: its address and its stats.
type backendRef interface {
	tcpAddr() *net.TCPAddr
	read() (counters, gauges schema.Stats, err error)
}

func (b *backend) tcpAddr() *net.TCPAddr { return b.addr }

func (b *backend) read() (counters, gauges schema.Stats, err error) {
	c, g := b.stats()
	return c, g, nil
}

// hostReply is one line of the backend host's answers.
type hostReply struct {
	Addrs    map[string]string `json:"addrs,omitempty"`
	Counters schema.Stats      `json:"counters,omitempty"`
	Gauges   schema.Stats      `json:"gauges,omitempty"`
	Error    string            `json:"error,omitempty"`
	// Field is where the address is written that the host could not listen on (an
	// AddressError's), with Error.
	Field string `json:"field,omitempty"`
}

// ServeBackendHost is the backend host: it reads the backends' specs from in, serves them
// and answers stats requests until in ends (see above), then closes them. Its log goes to log.
func ServeBackendHost(in io.Reader, out, log io.Writer) error {
	r := bufio.NewReader(in)
	enc := json.NewEncoder(out)
	logf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	var specs map[string]schema.Backend
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("backend host: reading the specs: %w", err)
	}
	if err := json.Unmarshal(line, &specs); err != nil {
		return fmt.Errorf("backend host: the specs: %w", err)
	}
	backends := map[string]*backend{}
	closeAll := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var errs []error
		for _, b := range backends {
			errs = append(errs, b.close(ctx))
		}
		return errors.Join(errs...)
	}
	addrs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		b, err := startBackend(name, specs[name], logf)
		if err != nil {
			rep := hostReply{Error: err.Error()}
			if ae := (*AddressError)(nil); errors.As(err, &ae) {
				rep.Field = ae.Field
			}
			_ = enc.Encode(rep)
			return errors.Join(err, closeAll())
		}
		backends[name] = b
		addrs[name] = b.addr.String()
	}
	if err := enc.Encode(hostReply{Addrs: addrs}); err != nil {
		return errors.Join(err, closeAll())
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			// The end of stdin is the end of the run (or of labrun).
			return closeAll()
		}
		var rep hostReply
		if b := backends[strings.TrimSpace(line)]; b != nil {
			rep.Counters, rep.Gauges = b.stats()
		} else {
			rep.Error = fmt.Sprintf("no backend %q", strings.TrimSpace(line))
		}
		if err := enc.Encode(rep); err != nil {
			return errors.Join(err, closeAll())
		}
	}
}

// backendHost is labrun's end of a backend host.
type backendHost struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	logs chan struct{} // closed when the host's stderr has ended
	// exited is closed when the host has exited, exitErr then how (its Wait's error).
	exited  chan struct{}
	exitErr error
	mu      sync.Mutex // one request at a time
	// names are the stat names seen, under mu.
	names map[string]string
	// broken is the error after which the host answers no more (under mu).
	broken error
	// backends are the names of the backends it serves, sorted.
	backends []string
	// endSaid is set once ended has said that the host is gone: the run is an error saying
	// so, and close does not say it again.
	endSaid atomic.Bool
}

// startHost starts cmd as the backend host of specs; its log lines go to logf.
func startHost(ctx context.Context, cmd *exec.Cmd, specs map[string]schema.Backend, launch *launcher, logf func(string, ...any)) (*backendHost, map[string]*net.TCPAddr, error) {
	// Without the run's marker: the processes' stop signals what carries it, and the host is
	// closed after them (its backends serve until the end), by its stdin.
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	// Started from the launcher's thread with SIGKILL as the parent-death signal: the host
	// dies with labrun however labrun ends.
	if err := launch.spawn.start(cmd, true); err != nil {
		return nil, nil, fmt.Errorf("backend host: %w", err)
	}
	h := &backendHost{cmd: cmd, in: in, out: bufio.NewReader(outPipe), logs: make(chan struct{}), exited: make(chan struct{}),
		backends: slices.Sorted(maps.Keys(specs))}
	go func() {
		defer close(h.logs)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			logf("%s", sc.Text())
		}
	}()
	go func() {
		<-h.logs
		h.exitErr = h.cmd.Wait()
		close(h.exited)
	}()
	b, err := json.Marshal(specs)
	if err == nil {
		_, err = h.in.Write(append(b, '\n'))
	}
	var rep hostReply
	if err == nil {
		err = h.reply(ctx, &rep)
	}
	if err == nil && rep.Error != "" {
		err = errors.New(rep.Error)
		if rep.Field != "" {
			err = &AddressError{Field: rep.Field, Err: err}
		}
	}
	addrs := map[string]*net.TCPAddr{}
	for name, a := range rep.Addrs {
		ta, perr := net.ResolveTCPAddr("tcp", a)
		if perr != nil {
			err = errors.Join(err, perr)
			continue
		}
		addrs[name] = ta
	}
	if err == nil && len(addrs) != len(specs) {
		err = fmt.Errorf("backend host answered %d addresses for %d backends", len(addrs), len(specs))
	}
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		cerr := h.close(cctx)
		var exit *exec.ExitError
		if rep.Error != "" && errors.As(cerr, &exit) {
			// The host said why it could not serve, and exits for it: its exit status
			// says nothing more.
			cerr = nil
		}
		return nil, nil, errors.Join(err, cerr)
	}
	return h, addrs, nil
}

// reply reads one answer, giving up when ctx ends (the host is then killed by close).
func (h *backendHost) reply(ctx context.Context, rep *hostReply) error {
	done := make(chan error, 1)
	go func() {
		line, err := h.out.ReadBytes('\n')
		if err != nil {
			done <- fmt.Errorf("backend host: %w (its log says why)", err)
			return
		}
		done <- json.Unmarshal(line, rep)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("backend host: no answer: %w", context.Cause(ctx))
	}
}

// stats reads one backend's stats from the host.
func (h *backendHost) stats(name string) (counters, gauges schema.Stats, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.broken != nil {
		return nil, nil, h.broken
	}
	if _, err := io.WriteString(h.in, name+"\n"); err != nil {
		h.broken = h.gone(fmt.Errorf("backend host: %w", err))
		return nil, nil, h.broken
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rep hostReply
	if err := h.reply(ctx, &rep); err != nil {
		// An answer that did not come (or came garbled) would answer the next question.
		h.broken = h.gone(err)
		return nil, nil, h.broken
	}
	if rep.Error != "" {
		return nil, nil, errors.New(rep.Error)
	}
	return h.intern(rep.Counters), h.intern(rep.Gauges), nil
}

// intern gives m's keys the strings of earlier answers: a long run keeps every snapshot, and
// decoding makes new strings of the same two dozen names each time.
func (h *backendHost) intern(m schema.Stats) schema.Stats {
	if h.names == nil {
		h.names = map[string]string{}
	}
	out := make(schema.Stats, len(m))
	for k, v := range m {
		name, ok := h.names[k]
		if !ok {
			name = k
			h.names[k] = k
		}
		out[name] = v
	}
	return out
}

// gone is err, a request to the host that failed, or, when the host has exited (or does
// within a second: a request to a host being killed can fail before its exit is seen), that
// it is gone and how: "backend host: write |1: broken pipe" said nothing of a host killed
// during the run.
func (h *backendHost) gone(err error) error {
	select {
	case <-h.exited:
	case <-time.After(time.Second):
		return err
	}
	return errors.New(h.goneText())
}

// goneText says that the host, which has exited, is gone, how, and which backends with it.
func (h *backendHost) goneText() string {
	how := "it exited"
	if h.exitErr != nil {
		how = h.exitErr.Error()
	}
	return h.goneTextHow(how)
}

// goneTextHow is goneText with how it ended.
func (h *backendHost) goneTextHow(how string) string {
	var names []string
	for _, n := range h.backends {
		names = append(names, "backend "+n)
	}
	return fmt.Sprintf("the backend host (pid %d, labrun's process that serves the local backends) is gone (%s), and %s with it", h.cmd.Process.Pid, how, strings.Join(names, ", "))
}

// ended says that the host is gone and how ("" while it serves): before close, it can only
// have been killed (it exits of itself when its stdin ends, which close does).
func (h *backendHost) ended() string {
	select {
	case <-h.exited:
		h.endSaid.Store(true)
		return h.goneText()
	default:
	}
	// Exited, and the goroutine in its Wait has not run yet (a busy machine): the kernel says
	// how without reaping it.
	how := childExit(h.cmd.Process.Pid)
	if how == "" {
		return ""
	}
	h.endSaid.Store(true)
	return h.goneTextHow(how)
}

// close ends the host's stdin, which closes its backends, and waits for it to exit; if it
// has not when ctx ends, it is killed.
func (h *backendHost) close(ctx context.Context) error {
	h.in.Close()
	select {
	case <-h.exited:
		if h.endSaid.Load() {
			// The run's error says it (Ended): before, "closing the local target: close
			// backend host: backend host: signal: killed" followed the verdict that had said
			// the host was killed.
			return nil
		}
		if h.exitErr != nil {
			return fmt.Errorf("backend host: %w", h.exitErr)
		}
		return nil
	case <-ctx.Done():
		_ = h.cmd.Process.Kill()
		<-h.exited
		return fmt.Errorf("backend host: killed after %w", context.Cause(ctx))
	}
}

// hostedBackend is a backend of the backend host.
type hostedBackend struct {
	h    *backendHost
	name string
	addr *net.TCPAddr
}

func (b *hostedBackend) tcpAddr() *net.TCPAddr { return b.addr }

func (b *hostedBackend) read() (counters, gauges schema.Stats, err error) {
	return b.h.stats(b.name)
}
