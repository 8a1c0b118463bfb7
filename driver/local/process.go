package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"labrun.dev/labrun/internal/keeper"
	"labrun.dev/labrun/schema"
)

const (
	// readyPoll is the interval between readiness checks.
	readyPoll = 50 * time.Millisecond
	// maxLineBytes splits a line that never ends (a binary blob, a progress bar).
	maxLineBytes = schema.MaxLine
	// lineCost is what a kept line counts against the output's budgets besides its text, so
	// that a flood of empty lines is bounded too.
	lineCost = 64
	// tailLines is how much output an error about a process shows.
	tailLines = 20
)

// processRunner starts the local commands of process steps and keeps them by name, for
// kill steps, logs steps and Close.
type processRunner struct {
	opts   *Options
	launch *launcher

	mu    sync.Mutex
	procs map[string]*process
}

func newProcessRunner(opts *Options, launch *launcher) *processRunner {
	return &processRunner{opts: opts, launch: launch, procs: map[string]*process{}}
}

// Start starts argv in its own process group (dir relative to the scenario's directory;
// env added to the base environment; stdin empty), records its output line by line with
// the time each line was read, and waits for its readiness check: http (a GET answers 2xx),
// tcp (a connect succeeds) or log (a line matches), within the check's timeout (default
// 10s). A process that exits or does not become ready in time is an error that shows the
// end of its output; one that is not ready is killed. The process runs until it is stopped
// or the target closes: ctx bounds only the start and the readiness wait.
func (r *processRunner) Start(ctx context.Context, name string, req schema.Process) (schema.RunningProcess, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, fmt.Errorf("process %s: argv is empty", name)
	}
	ready, err := readinessOf(req.Ready)
	if err != nil {
		return nil, fmt.Errorf("process %s: %w", name, err)
	}
	if ready != nil {
		// A check on a port someone already holds would pass for that someone.
		if err := ready.portFree(); err != nil {
			return nil, fmt.Errorf("process %s: %w", name, err)
		}
	}
	r.mu.Lock()
	if old, ok := r.procs[name]; ok && !old.exited() {
		r.mu.Unlock()
		return nil, fmt.Errorf("process %s: a process of that name is still running (pid %d)", name, old.cmd.Process.Pid)
	}
	cmd := exec.Command(req.Argv[0], req.Argv[1:]...)
	cmd.Dir = r.opts.Dir
	if req.Dir != "" {
		cmd.Dir = req.Dir
		if !filepath.IsAbs(req.Dir) && r.opts.Dir != "" {
			cmd.Dir = filepath.Join(r.opts.Dir, req.Dir)
		}
	}
	cmd.Env = r.launch.env(commandEnv(r.opts, req.Env))
	p := &process{name: name, argv: req.Argv, cmd: cmd, grace: r.opts.StopGrace, marker: r.launch.marker, done: make(chan struct{}), out: req.Output}
	if ready != nil {
		p.readyLog = ready.log
	}
	p.stdout.p, p.stderr.p = p, p
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	ctl, err := r.launch.prepare(cmd, r.opts.StopGrace)
	if err == nil {
		p.ctl = ctl
		err = r.launch.start(cmd, ctl)
	}
	if err != nil {
		r.mu.Unlock()
		return nil, fmt.Errorf("process %s: %w", name, err)
	}
	r.procs[name] = p
	r.mu.Unlock() // the readiness wait must not block logs steps or other processes
	go p.wait(r.opts.logf)
	r.opts.logf("process %s started (pid %d): %s", name, cmd.Process.Pid, strings.Join(req.Argv, " "))
	if ready != nil {
		if err := p.waitReady(ctx, ready); err != nil {
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = p.Stop(kctx, "KILL")
			return nil, fmt.Errorf("process %s: %w", name, err)
		}
	}
	return p, nil
}

// lookup returns the process of that name, running or not.
func (r *processRunner) lookup(name string) (*process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.procs[name]
	if !ok {
		return nil, fmt.Errorf("no process %q was started (processes: %s)", name, knownNames(r.procs))
	}
	return p, nil
}

// stopAll stops every process (TERM, then KILL after the grace period), all at once.
func (r *processRunner) stopAll(ctx context.Context) error {
	r.mu.Lock()
	procs := slices.Collect(maps.Values(r.procs))
	r.mu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Stop(ctx, "TERM") })
	}
	// What left the processes' groups gets their TERM too (when it kept the run's marker);
	// their keepers KILL it with the rest after the grace period.
	r.launch.signalEscaped(syscall.SIGTERM)
	wg.Wait()
	return errors.Join(errs...)
}

// process is one started command.
type process struct {
	name   string
	argv   []string
	cmd    *exec.Cmd
	grace  time.Duration
	marker string // the run's marker in its environment (see launch.go)
	// ctl kills the process's whole tree (nil without keepers: its group is killed instead).
	ctl *keeper.Control

	done    chan struct{} // closed when the process has exited and its output is read
	waitErr error         // set before done is closed

	mu sync.Mutex
	// The output in memory: the first lines (up to schema.OutputHead bytes) and the last
	// (up to schema.OutputTail); the lines between are dropped (dropped, the time of the last
	// of them in droppedUntil). out, when set, receives every line as it comes.
	head, tail           []schema.LogLine // the tail from tailStart on
	tailStart            int
	headBytes, tailBytes int
	dropped              int
	droppedUntil         time.Time
	out                  io.Writer
	outErr               error
	// readyLog is the ready check's pattern, matched against each line as it comes.
	readyLog     *regexp.Regexp
	readyMatched bool
	stdout       lineSink
	stderr       lineSink
}

func (p *process) wait(logf func(string, ...any)) {
	err := p.cmd.Wait()
	p.ctl.Kill() // the tree is empty: this releases the control pipe
	p.mu.Lock()
	p.stdout.flushLocked()
	p.stderr.flushLocked()
	p.mu.Unlock()
	p.waitErr = err
	logf("process %s %s", p.name, p.exitText()) // before done: Stop returns after the log line
	close(p.done)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Ended says how the process ended, or false while it runs.
func (p *process) Ended() (string, bool) {
	if !p.exited() {
		return "", false
	}
	return p.exitText(), true
}

// exitText says how the process ended; call after done.
func (p *process) exitText() string {
	ps := p.cmd.ProcessState
	switch {
	case ps == nil:
		return fmt.Sprintf("ended: %v", p.waitErr)
	case ps.Success():
		return "exited with code 0"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %s", ws.Signal())
	}
	return fmt.Sprintf("exited with code %d", ps.ExitCode())
}

// Stop signals the process group ("TERM" or "KILL") and waits for the process, and everything
// it started, to end. After TERM it waits the grace period (or until ctx ends), then kills. A
// kill is its keeper's: every descendant, whatever its session or environment, dies before
// the keeper exits. A process that has already ended is not an error and is not signalled:
// once it is reaped, its pid (the group's id) may belong to someone else.
func (p *process) Stop(ctx context.Context, signal string) error {
	var sig syscall.Signal
	switch signal {
	case "", "TERM":
		sig = syscall.SIGTERM
	case "KILL":
		sig = syscall.SIGKILL
	default:
		return fmt.Errorf("process %s: unknown signal %q (TERM or KILL)", p.name, signal)
	}
	if p.exited() {
		return nil
	}
	if sig == syscall.SIGTERM {
		if err := signalGroup(p.cmd.Process, sig); err != nil {
			return fmt.Errorf("process %s: %s: %w", p.name, signal, err)
		}
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.done:
			return nil
		case <-t.C:
		case <-ctx.Done():
		}
	}
	p.kill()
	// KILL cannot be ignored; what remains is reaping and the end of the output.
	t := time.NewTimer(waitDelay + 3*time.Second)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
	}
	// The keeper did not end: kill the group, keeper and all, as a last resort.
	_ = signalGroup(p.cmd.Process, syscall.SIGKILL)
	return fmt.Errorf("process %s (pid %d) did not end after KILL", p.name, p.cmd.Process.Pid)
}

// kill kills the process's tree (its keeper's), or its group without a keeper.
func (p *process) kill() {
	if p.ctl != nil {
		p.ctl.Kill()
		return
	}
	_ = signalGroup(p.cmd.Process, syscall.SIGKILL)
}

// lines returns the output in memory, in order: the head, then the tail.
func (p *process) linesLocked() []schema.LogLine {
	return append(slices.Clip(p.head), p.tail[p.tailStart:]...)
}

// since hands on the lines written at or after t; it returns schema.ErrLinesCut when lines
// of that window were dropped from memory (the process's artifact file has them all).
func (p *process) since(t time.Time, line func(schema.LogLine)) error {
	p.mu.Lock()
	lines := p.linesLocked()
	cut := p.dropped > 0 && !p.droppedUntil.Before(t)
	p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(lines, t, func(l schema.LogLine, t time.Time) int { return l.Time.Compare(t) })
	for _, l := range lines[i:] {
		line(l)
	}
	if cut {
		return schema.ErrLinesCut
	}
	return nil
}

// tail is the end of the output, for error messages.
func (p *process) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := p.linesLocked()
	lines := all[max(0, len(all)-tailLines):]
	if len(lines) == 0 {
		return "(no output)"
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("\n  | " + l.Text)
	}
	return b.String()
}

// lineSink splits one stream of a process into lines, stamped with the time they were read.
type lineSink struct {
	p       *process
	partial []byte
}

func (w *lineSink) Write(b []byte) (int, error) {
	now := time.Now()
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	// Only the new bytes are searched and copied: output without newlines costs no more than
	// output with them (a line longer than maxLineBytes goes in pieces of that size).
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		for len(w.partial)+len(seg) > maxLineBytes {
			room := maxLineBytes - len(w.partial)
			w.partial = append(w.partial, seg[:room]...)
			w.p.appendLocked(now, w.partial)
			w.partial, seg = w.partial[:0], seg[room:]
		}
		w.partial = append(w.partial, seg...)
		if i < 0 {
			break
		}
		w.p.appendLocked(now, w.partial)
		w.partial, b = w.partial[:0], b[i+1:]
	}
	return n, nil
}

func (w *lineSink) flushLocked() {
	if len(w.partial) > 0 {
		w.p.appendLocked(time.Now(), w.partial)
		w.partial = nil
	}
}

func (p *process) appendLocked(t time.Time, line []byte) {
	// Keep times non-decreasing across the two streams, so that since() can bisect.
	if last := p.lastTimeLocked(); t.Before(last) {
		t = last
	}
	l := schema.LogLine{Time: t, Text: strings.TrimSuffix(string(line), "\r")}
	if p.out != nil && p.outErr == nil {
		_, p.outErr = io.WriteString(p.out, l.Time.UTC().Format(time.RFC3339Nano)+" "+l.Text+"\n")
	}
	if p.readyLog != nil && !p.readyMatched && p.readyLog.MatchString(l.Text) {
		p.readyMatched = true
	}
	cost := len(l.Text) + lineCost
	if len(p.tail) == 0 && p.headBytes+cost <= schema.OutputHead {
		p.head = append(p.head, l)
		p.headBytes += cost
		return
	}
	p.tail = append(p.tail, l)
	p.tailBytes += cost
	for p.tailBytes > schema.OutputTail && p.tailStart < len(p.tail)-1 {
		p.tailBytes -= len(p.tail[p.tailStart].Text) + lineCost
		p.droppedUntil = p.tail[p.tailStart].Time
		p.tail[p.tailStart] = schema.LogLine{}
		p.tailStart++
		p.dropped++
	}
	if p.tailStart > len(p.tail)/2 { // amortised: the dropped front is reclaimed
		p.tail = append(p.tail[:0], p.tail[p.tailStart:]...)
		p.tailStart = 0
	}
}

func (p *process) lastTimeLocked() time.Time {
	switch {
	case len(p.tail) > p.tailStart:
		return p.tail[len(p.tail)-1].Time
	case len(p.head) > 0:
		return p.head[len(p.head)-1].Time
	}
	return time.Time{}
}

// readiness is a parsed readiness check.
type readiness struct {
	http    string
	tcp     string
	log     *regexp.Regexp
	timeout time.Duration
}

func readinessOf(r *schema.Ready) (*readiness, error) {
	if r == nil {
		return nil, nil
	}
	rd := &readiness{http: r.HTTP, tcp: r.TCP, timeout: r.Timeout.D()}
	if rd.timeout == 0 {
		rd.timeout = schema.DefaultReadyTimeout
	}
	n := 0
	for _, s := range []string{r.HTTP, r.TCP, r.Log} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("ready needs exactly one of http, tcp, log")
	}
	if r.Log != "" {
		re, err := regexp.Compile(r.Log)
		if err != nil {
			return nil, fmt.Errorf("ready log: %w", err)
		}
		rd.log = re
	}
	return rd, nil
}

func (rd *readiness) String() string {
	switch {
	case rd.http != "":
		return "http " + rd.http
	case rd.tcp != "":
		return "tcp " + rd.tcp
	}
	return "log /" + rd.log.String() + "/"
}

// endpoint is the address a tcp or http check connects to, when its host is an IP literal or
// localhost (a name that only DNS knows is not looked up for this).
func (rd *readiness) endpoint() ([]net.IP, int, bool) {
	var hostport string
	switch {
	case rd.tcp != "":
		hostport = rd.tcp
	case rd.http != "":
		u, err := url.Parse(rd.http)
		if err != nil || u.Host == "" {
			return nil, 0, false
		}
		hostport = u.Host
		if u.Port() == "" {
			port := map[string]string{"http": "80", "https": "443"}[u.Scheme]
			if port == "" {
				return nil, 0, false
			}
			hostport = net.JoinHostPort(u.Hostname(), port)
		}
	default:
		return nil, 0, false
	}
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, 0, false
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return nil, 0, false
	}
	if host == "localhost" || host == "" {
		return []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}, port, true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, 0, false
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return []net.IP{ip}, port, true
}

// portFree fails when the port a tcp or http check connects to is already listened on, before
// the process starts, naming who holds it when labrun can see that.
func (rd *readiness) portFree() error {
	ips, port, ok := rd.endpoint()
	if !ok {
		return nil
	}
	holders := portHolders(ips, port)
	if holders == "" {
		return nil
	}
	return fmt.Errorf("ready %s: port %d is already in use before the process started, by %s: the check would pass for that program, not this process", rd, port, holders)
}

// portHolders names the processes listening on port at ips ("pid 123 (python3 -m
// http.server 8080)", comma-separated), or is "" when labrun sees none.
func portHolders(ips []net.IP, port int) string {
	holders, ok := portListeners(ips, port)
	if !ok || len(holders) == 0 {
		return ""
	}
	names := make([]string, len(holders))
	for i, h := range holders {
		names[i] = h.String()
	}
	return strings.Join(names, ", ")
}

// AddressError is a failure to listen on an address the scenario fixes: Field is where it
// is written ("local.backends.a.address", "local.blackholes.h.address", "local.dns.address"),
// so that the run can say the scenario's line of it.
type AddressError struct {
	Field string
	Err   error
}

func (e *AddressError) Error() string { return e.Err.Error() }
func (e *AddressError) Unwrap() error { return e.Err }

// fixedAddress is err, a failure to listen on address, as an AddressError of field when the
// scenario fixes the address ("": a free port, nothing to point at).
func fixedAddress(field, address string, err error) error {
	if address == "" || err == nil {
		return err
	}
	return &AddressError{Field: field, Err: err}
}

// addressTaken adds to err, the failure to listen on a fixed address of the local world (a
// backend's, a blackhole's), who holds it and what to write, when it is in use.
func addressTaken(err error, ip net.IP, port int) error {
	if port == 0 || !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	by := ""
	if h := portHolders([]net.IP{ip}, port); h != "" {
		by = ", by " + h
	}
	return fmt.Errorf("%w%s: write another address, or none for a free port", err, by)
}

// waitReady polls the check until it passes, the process exits, the timeout passes or ctx ends.
func (p *process) waitReady(ctx context.Context, rd *readiness) error {
	deadline := time.NewTimer(rd.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	last := "not checked yet"
	for {
		ok, why := p.checkOnce(ctx, rd, client)
		if ok {
			return p.confirmReady(rd)
		}
		last = why
		select {
		case <-p.done:
			return fmt.Errorf("%s before it was ready (%s); last output:%s", p.exitText(), rd, p.lastLines())
		case <-ctx.Done():
			return fmt.Errorf("not ready (%s): %w; last output:%s", rd, ctx.Err(), p.lastLines())
		case <-deadline.C:
			return fmt.Errorf("not ready after %s (%s: %s); last output:%s", rd.timeout, rd, last, p.lastLines())
		case <-tick.C:
		}
	}
}

// confirmReady checks that a check that passed speaks for this process: the process is still
// running, and the socket that answered a tcp or http check, when labrun can see who holds it,
// is held by this process or one of its descendants.
func (p *process) confirmReady(rd *readiness) error {
	if p.exited() {
		return fmt.Errorf("%s, although its check passed (%s): what answered is not this process; last output:%s", p.exitText(), rd, p.lastLines())
	}
	ips, port, ok := rd.endpoint()
	if !ok {
		return nil
	}
	holders, ok := portListeners(ips, port)
	if !ok || len(holders) == 0 {
		return nil // not a socket of this machine that labrun can see
	}
	var others []string
	for _, h := range holders {
		if h.pid == p.cmd.Process.Pid || h.carries(p.marker) || isDescendant(h.pid, p.cmd.Process.Pid) {
			return nil
		}
		if h.pid != 0 {
			others = append(others, h.String())
		}
	}
	if len(others) == 0 {
		return nil // held by no process labrun can see: it cannot say whose it is
	}
	return fmt.Errorf("ready check %s was answered by %s, not by this process; last output:%s", rd, strings.Join(others, ", "), p.lastLines())
}

func (p *process) checkOnce(ctx context.Context, rd *readiness, client *http.Client) (bool, string) {
	switch {
	case rd.http != "":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rd.http, nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return true, ""
		}
		return false, resp.Status
	case rd.tcp != "":
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c, err := d.DialContext(dctx, "tcp", rd.tcp)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readyMatched { // each line is matched as it comes (appendLocked)
		return true, ""
	}
	return false, "no line matched"
}
