// Package local is the local target: it builds the world of one run on this machine, with
// nothing installed, and hands the interpreter an schema.Target whose drivers talk to it.
//
// The world (schema.Local) holds:
//
//   - echo backends: HTTP servers on loopback answering with fortio's echo handler
//     (?delay=, ?status=503 or ?status=503:50, ...), a `who=<name>` line at /who, the header
//     X-Backend: <name> on every response, and real counters (requests, status codes,
//     connections, bytes) read directly and as Prometheus text at /metrics; in a process of
//     their own when Options.BackendHost says how to start it (labrun does: backendhost.go),
//     else in this one;
//   - blackholes: loopback listeners whose accept queue is kept full, so that connects time out;
//   - a lab DNS zone: an in-process authoritative server (UDP and TCP) whose records dns steps
//     change one host name at a time. While the target is open, net.DefaultResolver sends
//     queries for the zone to it (see resolver.go, the one place that touches that global).
//
// The drivers: Load is the fortio generator of driver/fortio, Stats reads the backends, a
// Prometheus URL or an Envoy admin endpoint, Exec and Processes run local commands, Logs reads
// a process's output or a file, DNS sets the zone's records.
//
// Every server listens on loopback only: a backend, blackhole or DNS address whose host is not
// a loopback IP is refused. Close tears everything down in reverse order and restores
// net.DefaultResolver.
//
// The commands of process and exec steps die with labrun however it ends, kill -9 included,
// and so does everything they start, whatever it does to its session or environment: each
// runs under a keeper, a child subreaper that kills its whole tree when labrun asks, when
// the command exits, or when labrun is gone (internal/keeper, launch.go). A process's readiness
// check counts only for that process: a port held by another program before it starts is an
// error naming that program (portowner_linux.go).
package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"labrun.dev/labrun/schema"
)

// Options configure the local target.
type Options struct {
	// Dir is the scenario file's directory; relative paths (a logs step's file, a process's
	// dir) are resolved against it, and commands run in it. Empty means the current directory.
	Dir string

	// Logf, when set, receives one line per notable event: a server started, records changed,
	// a process started or exited, an unexpected server error.
	Logf func(format string, args ...any)

	// Env is the base environment of exec and process commands; nil means this process's own.
	// AddEnv, then a step's env, are added to it.
	Env []string
	// AddEnv is added to the base environment of every command: the kube target's KUBECONFIG,
	// LABRUN_CONTEXT and LABRUN_NAMESPACE when it runs commands here.
	AddEnv map[string]string

	// BackendHost, when set, makes the command that serves the echo backends in a process of
	// their own (labrun: itself with a hidden argument, see ServeBackendHost), so that the
	// load and the backends do not share one Go runtime. Nil: they run in this process.
	BackendHost func() *exec.Cmd

	// StopGrace is how long stopping a process with TERM waits before it sends KILL (default 5s).
	StopGrace time.Duration
}

func (o *Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// world is what New built, for the drivers to share.
type world struct {
	opts       Options
	backends   map[string]backendRef
	blackholes map[string]*blackhole
	dns        *dnsServer
	procs      *processRunner
	http       *adminClient
}

// New creates the world of one run and returns the target that drives it. On error, whatever
// was already created is torn down. The target's Close tears all of it down; it must be called.
func New(ctx context.Context, spec *schema.Local, opts Options) (*schema.Target, error) {
	if spec == nil {
		spec = &schema.Local{}
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 5 * time.Second
	}
	w := &world{
		opts:       opts,
		backends:   map[string]backendRef{},
		blackholes: map[string]*blackhole{},
		http:       newAdminClient(),
	}
	var cleanup teardown
	cleanup.add("admin client", func(context.Context) error { w.http.close(); return nil })
	fail := func(err error) (*schema.Target, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return nil, errors.Join(err, cleanup.run(cctx))
	}

	// The launcher closes after the processes (and the backend host) stop.
	launch := newLauncher()
	cleanup.add("launcher", launch.close)
	var host *backendHost
	if opts.BackendHost != nil && len(spec.Backends) > 0 {
		h, addrs, err := startHost(ctx, opts.BackendHost(), spec.Backends, launch, opts.logf)
		if err != nil {
			return fail(err)
		}
		host = h
		cleanup.add("backend host", h.close)
		for _, name := range slices.Sorted(maps.Keys(addrs)) {
			w.backends[name] = &hostedBackend{h: h, name: name, addr: addrs[name]}
			opts.logf("backend %s listening on %s (backend host, pid %d)", name, addrs[name], h.cmd.Process.Pid)
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(spec.Backends)) {
			b, err := startBackend(name, spec.Backends[name], opts.logf)
			if err != nil {
				return fail(err)
			}
			w.backends[name] = b
			cleanup.add("backend "+name, b.close)
			opts.logf("backend %s listening on %s", name, b.addr)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Blackholes)) {
		bh, err := openBlackhole(ctx, name, spec.Blackholes[name].Address)
		if err != nil {
			return fail(err)
		}
		w.blackholes[name] = bh
		cleanup.add("blackhole "+name, func(context.Context) error { return bh.close() })
		opts.logf("blackhole %s on %s (accept queue full after %d connections)", name, bh.addr, len(bh.fill))
	}
	if spec.DNS != nil {
		d, err := startDNS(*spec.DNS, opts.logf)
		if err != nil {
			return fail(err)
		}
		w.dns = d
		cleanup.add("dns server", func(context.Context) error { return d.close() })
		restore, err := installResolver(d.zone, d.addr.String())
		if err != nil {
			return fail(err)
		}
		cleanup.add("resolver hook", func(context.Context) error { restore(); return nil })
		opts.logf("dns zone %s served on %s (udp+tcp); in-process lookups of the zone go there", d.zone, d.addr)
	}
	w.procs = newProcessRunner(&w.opts, launch)
	cleanup.add("processes", w.procs.stopAll)

	builtin, _ := schema.BuiltinTarget("local", spec)
	caps := builtin.Caps
	t := &schema.Target{
		Name:      "local",
		Describe:  w.describe(),
		Caps:      caps,
		Exec:      &executor{opts: &w.opts, launch: launch},
		Load:      newLoadGenerator(),
		Stats:     &statsReader{w: w},
		Logs:      &logReader{w: w},
		Processes: w.procs,
		Values:    w.values(),
		Close:     cleanup.run,
	}
	if w.dns != nil {
		t.DNS = w.dns
	}
	if host != nil {
		t.Ended = host.ended
	}
	return t, nil
}

// describe says what the world holds, for the start of a run.
func (w *world) describe() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(w.backends)) {
		parts = append(parts, fmt.Sprintf("backend %s %s", name, w.backends[name].tcpAddr()))
	}
	for _, name := range slices.Sorted(maps.Keys(w.blackholes)) {
		parts = append(parts, fmt.Sprintf("blackhole %s %s", name, w.blackholes[name].addr))
	}
	if w.dns != nil {
		parts = append(parts, fmt.Sprintf("dns %s at %s", w.dns.zone, w.dns.addr))
	}
	if len(parts) == 0 {
		return "this machine"
	}
	// The target's name ("local") is printed before this, by the CLI and the report.
	return strings.Join(parts, ", ")
}

// values are the names expressions see: backends.<name>, blackholes.<name> (schema.Endpoint)
// and dns (zone, address, host, port).
func (w *world) values() map[string]any {
	backends := map[string]schema.Endpoint{}
	for name, b := range w.backends {
		backends[name] = endpointOf(b.tcpAddr())
	}
	blackholes := map[string]schema.Endpoint{}
	for name, bh := range w.blackholes {
		blackholes[name] = endpointOf(bh.addr)
	}
	v := map[string]any{"backends": backends, "blackholes": blackholes}
	if w.dns != nil {
		v["dns"] = map[string]any{
			"zone":    w.dns.zone,
			"address": w.dns.addr.String(),
			"host":    w.dns.addr.IP.String(),
			"port":    float64(w.dns.addr.Port),
		}
	}
	return v
}

func endpointOf(a *net.TCPAddr) schema.Endpoint {
	host := a.IP.String()
	hp := net.JoinHostPort(host, strconv.Itoa(a.Port))
	return schema.Endpoint{Address: hp, Host: host, Port: float64(a.Port), URL: "http://" + hp}
}

// loopbackAddr parses a listen address of the world: "host:port", "host" (port 0) or ""
// (127.0.0.1, port 0). The host must be a loopback IP literal, so that nothing the lab
// serves is reachable from another machine.
func loopbackAddr(address string) (net.IP, int, error) {
	if address == "" {
		return net.IPv4(127, 0, 0, 1), 0, nil
	}
	host, port := address, "0"
	if h, p, err := net.SplitHostPort(address); err == nil {
		host, port = h, p
	} else if strings.Count(address, ":") == 1 {
		return nil, 0, fmt.Errorf("address %q: %v", address, err)
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, 0, fmt.Errorf("address %q: the local target listens on loopback only (127.0.0.0/8 or ::1)", address)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return nil, 0, fmt.Errorf("address %q: bad port %q", address, port)
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return ip, n, nil
}

// teardown runs cleanup functions in reverse order of registration, every one of them even
// when some fail, and only once.
type teardown struct {
	mu    sync.Mutex
	steps []teardownStep
	done  bool
}

type teardownStep struct {
	what string
	fn   func(context.Context) error
}

func (t *teardown) add(what string, fn func(context.Context) error) {
	t.steps = append(t.steps, teardownStep{what, fn})
}

func (t *teardown) run(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil
	}
	t.done = true
	var errs []error
	for _, s := range slices.Backward(t.steps) {
		if err := s.fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.what, err))
		}
	}
	return errors.Join(errs...)
}

// knownNames lists the names of a map for an error message.
func knownNames[V any](m map[string]V) string {
	names := slices.Sorted(maps.Keys(m))
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
