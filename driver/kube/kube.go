// Package kube is the Kubernetes target: the drivers of schema.Target that reach a cluster
// through client-go. It is the only package of labrun that imports client-go.
//
// Every call is bounded in time: non-streaming requests by the rest.Config Timeout and the
// step's context; streaming calls (exec, logs, port-forward) by the step's context, with a
// default cap when that context has no deadline. Mutating calls (apply, delete, scale, restart,
// kill, dns) are refused outside Options.AllowedNamespaces even though the interpreter checks
// first: defence in depth. No error, log line or result carries a token or other credential.
package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Options configures the kube target. The zero value means: the current kubeconfig context,
// its namespace, and no namespace in which mutations are allowed.
type Options struct {
	// Kubeconfig is the kubeconfig file's path (default: $KUBECONFIG, then ~/.kube/config,
	// or the in-cluster config when running in a pod).
	Kubeconfig string
	// Context is the kubeconfig context (default: the current one).
	Context string
	// Namespace is the default namespace of steps that name none, like kubectl's -n
	// (default: the context's namespace, then "default").
	Namespace string

	// AllowedNamespaces are the only namespaces in which the driver mutates anything (and the
	// only Namespace objects it applies or deletes). Empty: every mutation is refused.
	AllowedNamespaces []string
	// ClusterScoped allows mutating cluster-scoped objects other than Namespaces (CRDs,
	// ClusterRoles, ...). Namespace objects must be in AllowedNamespaces either way.
	ClusterScoped bool
	// SystemNamespaces are the system namespaces (schema.SystemNamespaces) among
	// AllowedNamespaces that may be changed: the scenario opted in and the command line
	// allowed it. Any other system namespace is refused even when it is allowed.
	SystemNamespaces []string

	// EnvoyVia is how Envoy admin is read: "exec" (default; `pilot-agent request GET ...` in
	// the istio-proxy container) or "port-forward" (to the pod's port 15000).
	EnvoyVia string

	// RequestTimeout bounds each non-streaming API request (default 30s).
	RequestTimeout time.Duration
	// WaitTimeout bounds waits (rollout, condition, deletion) and execs whose context has no
	// deadline (default 5m).
	WaitTimeout time.Duration
	// QPS and Burst of the client (default 50 and 100; client-go's 5 and 10 throttle waits).
	QPS   float32
	Burst int

	// wrapTransport, set by tests, wraps the API client's transport (a request that reaches
	// the API server whose answer is then lost).
	wrapTransport func(http.RoundTripper) http.RoundTripper

	// Run, when its ID is set, marks every object the driver creates (labels LabelRun and
	// LabelScenario, annotations AnnotationScenario and AnnotationOwner).
	Run Run

	// Logf receives notes (fallbacks, skipped objects, API server warnings). Default: dropped.
	Logf func(format string, args ...any)
	// Getenv reads the environment (default os.Getenv); it decides whether to use the
	// in-cluster config.
	Getenv func(string) string
}

// EnvoyVia values.
const (
	EnvoyViaExec        = "exec"
	EnvoyViaPortForward = "port-forward"
)

// driver implements every kube-side interface of schema.Target.
type driver struct {
	opts      Options
	namespace string // default namespace
	guard     guard
	logf      func(string, ...any)

	cfg       *rest.Config // non-streaming calls: has Timeout
	streamCfg *rest.Config // exec, logs, port-forward: no client-wide Timeout
	cs        clients
	streamCS  clients
	dyn       dynamic.Interface
	disco     rest.Interface // the API server's root paths: /api, /apis
	mapper    *restMapper

	dnsLocks keyedMutex
}

var (
	_ schema.Cluster       = (*driver)(nil)
	_ schema.Executor      = (*driver)(nil)
	_ schema.LoadGenerator = (*driver)(nil)
	_ schema.StatsReader   = (*driver)(nil)
	_ schema.LogReader     = (*driver)(nil)
	_ schema.DNSWriter     = (*driver)(nil)
)

// New connects to the cluster and returns the kube target. It reads the CoreDNS Corefile to
// find the cluster domain (Target.Values["clusterDomain"], "cluster.local" when it cannot be
// read) and fails when the API server cannot be reached.
func New(ctx context.Context, opts Options) (*schema.Target, error) {
	d, describe, err := newDriver(opts)
	if err != nil {
		return nil, err
	}
	domain, err := d.clusterDomain(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.checkDiscovery(ctx); err != nil {
		return nil, err
	}
	spec, _ := schema.BuiltinTarget("kube", nil)
	caps := spec.Caps
	// This machine's part of the kube target (commands, processes) is not the cluster's:
	// driver/compose adds it beside these drivers.
	delete(caps, schema.CapHost)
	delete(caps, schema.CapProcesses)
	return &schema.Target{
		Name:     "kube",
		Describe: describe,
		Caps:     caps,
		Cluster:  d,
		Exec:     d,
		Load:     d,
		Stats:    d,
		Logs:     d,
		DNS:      d,
		Values:   map[string]any{"clusterDomain": domain},
		Close:    func(context.Context) error { return nil },
	}, nil
}

func newDriver(opts Options) (*driver, string, error) {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	if opts.WaitTimeout <= 0 {
		opts.WaitTimeout = 5 * time.Minute
	}
	if opts.QPS <= 0 {
		opts.QPS = 50
	}
	if opts.Burst <= 0 {
		opts.Burst = 100
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	switch opts.EnvoyVia {
	case "":
		opts.EnvoyVia = EnvoyViaExec
	case EnvoyViaExec, EnvoyViaPortForward:
	default:
		return nil, "", fmt.Errorf("kube: envoy access %q: want %q or %q", opts.EnvoyVia, EnvoyViaExec, EnvoyViaPortForward)
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}

	cfg, ns, describe, err := loadConfig(opts)
	if err != nil {
		return nil, "", err
	}
	if opts.Namespace != "" {
		ns = opts.Namespace
	}
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	cfg.UserAgent = "labrun"
	cfg.WarningHandler = warningLogger{logf}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return retriedAnswers{htmlAnswers{rt}} })
	if opts.wrapTransport != nil {
		cfg.Wrap(opts.wrapTransport) // a test's stand-in for a lost answer
	}
	streamCfg := rest.CopyConfig(cfg)
	cfg.Timeout = opts.RequestTimeout

	d := &driver{
		opts:      opts,
		namespace: ns,
		guard:     newGuard(withoutSystem(opts.AllowedNamespaces, opts.SystemNamespaces), opts.ClusterScoped),
		logf:      logf,
		cfg:       cfg,
		streamCfg: streamCfg,
	}
	if d.cs, err = newClients(cfg); err != nil {
		return nil, "", fmt.Errorf("kube: %w", err)
	}
	if d.streamCS, err = newClients(streamCfg); err != nil {
		return nil, "", fmt.Errorf("kube: %w", err)
	}
	if d.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, "", fmt.Errorf("kube: %w", err)
	}
	if d.disco, err = newDiscoveryClient(cfg); err != nil {
		return nil, "", fmt.Errorf("kube: %w", err)
	}
	d.mapper = newRESTMapper(d.disco)
	return d, describe, nil
}

// Server is the API server that New would reach with opts (its URL without credentials), read
// from the kubeconfig without connecting: two names of one cluster tell apart by it.
func Server(opts Options) (string, error) {
	cfg, _, _, err := loadConfig(opts)
	if err != nil {
		return "", err
	}
	return safeURL(cfg.Host), nil
}

// loadConfig returns the client config, the default namespace and a description without
// credentials: "context <ctx> server <url>".
func loadConfig(opts Options) (*rest.Config, string, string, error) {
	if opts.Kubeconfig == "" && opts.Context == "" && opts.Getenv("KUBERNETES_SERVICE_HOST") != "" &&
		opts.Getenv("KUBECONFIG") == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", "", fmt.Errorf("kube: in-cluster config: %w", err)
		}
		ns := "default"
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" {
				ns = s
			}
		}
		return cfg, ns, "in-cluster server " + safeURL(cfg.Host), nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", "", kubeconfigError(err, rules, opts.Context, opts.Getenv("KUBECONFIG"))
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	ctxName := opts.Context
	if ctxName == "" {
		if raw, err := cc.RawConfig(); err == nil {
			ctxName = raw.CurrentContext
		}
	}
	return cfg, ns, "context " + ctxName + " server " + safeURL(cfg.Host), nil
}

// kubeconfigError says in the user's terms what is wrong with the kubeconfig: which files were
// looked for and the flags and variable that name another (client-go would say "try setting
// KUBERNETES_MASTER", which labrun does not read), or the contexts there are.
func kubeconfigError(err error, rules *clientcmd.ClientConfigLoadingRules, context, env string) error {
	files := rules.GetLoadingPrecedence()
	if rules.ExplicitPath != "" {
		files = []string{rules.ExplicitPath}
	}
	var names []string
	raw, rerr := rules.Load()
	if rerr == nil {
		for n := range raw.Contexts {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	switch {
	case context != "" && rerr == nil && raw.Contexts[context] == nil:
		msg := fmt.Sprintf("kubeconfig %s has no context %q%s", strings.Join(files, ", "), context, dsl.DidYouMean(context, names))
		if len(names) > 0 {
			msg += "; its contexts: " + strings.Join(names, ", ")
		}
		return errors.New(msg)
	case clientcmd.IsEmptyConfig(err):
		where := "~/.kube/config does not exist and KUBECONFIG is not set"
		if env != "" {
			where = fmt.Sprintf("KUBECONFIG=%s names no kubeconfig with a cluster", env)
		}
		if rules.ExplicitPath != "" {
			where = fmt.Sprintf("--kubeconfig %s has no cluster", rules.ExplicitPath)
		}
		return fmt.Errorf("no kubeconfig: %s; give one with --kubeconfig FILE or KUBECONFIG=FILE, or run on the local target (--target local)", where)
	}
	if rules.ExplicitPath != "" && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--kubeconfig %s: no such file", rules.ExplicitPath)
	}
	return fmt.Errorf("kubeconfig %s: %w", strings.Join(files, ", "), err)
}

// safeURL drops user info and query from a server URL before it is printed.
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(server address not printable)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

type warningLogger struct{ logf func(string, ...any) }

func (w warningLogger) HandleWarningHeader(code int, _ string, text string) {
	if code == 299 && text != "" {
		w.logf("kube: API server warning: %s", text)
	}
}

// clusterDomain reads the cluster domain from the CoreDNS Corefile. A cluster without that
// ConfigMap (or a user who may not read it) gets "cluster.local" and a note; an unreachable
// API server is an error.
func (d *driver) clusterDomain(ctx context.Context) (string, error) {
	const fallback = "cluster.local"
	ctx, cancel := context.WithTimeout(ctx, d.opts.RequestTimeout)
	defer cancel()
	cm, err := d.cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", getOpts)
	if err != nil {
		if apierrors.IsUnauthorized(err) {
			// Every request would be refused the same way: say so once, now.
			return "", fmt.Errorf("kube: the API server at %s refused labrun's credentials (401 Unauthorized): check the kubeconfig's user (an expired or wrong token?)", safeURL(d.cfg.Host))
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			d.logf("kube: cannot read ConfigMap kube-system/coredns (%s); cluster domain %s assumed", apierrors.ReasonForError(err), fallback)
			return fallback, nil
		}
		return "", fmt.Errorf("kube: cluster unreachable at %s: %w", safeURL(d.cfg.Host), err)
	}
	if domain, ok := corefileDomain(cm.Data["Corefile"]); ok {
		return domain, nil
	}
	d.logf("kube: no `kubernetes <domain>` line in the CoreDNS Corefile; cluster domain %s assumed", fallback)
	return fallback, nil
}

// checkDiscovery reads the API server's group list, which every authenticated user may read:
// a refusal means labrun cannot work with these credentials, and it is said once, here, as
// an error (rather than by the first kind lookup, in the middle of a step).
func (d *driver) checkDiscovery(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.opts.RequestTimeout)
	defer cancel()
	err := d.disco.Get().AbsPath("/api").Do(ctx).Error()
	switch {
	case err == nil:
		return nil
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("kube: the API server at %s refused labrun's credentials (401 Unauthorized): check the kubeconfig's user (an expired or wrong token?)", safeURL(d.cfg.Host))
	case apierrors.IsForbidden(err):
		return fmt.Errorf("kube: the API server at %s forbids labrun's user to read API discovery (403 Forbidden): %s", safeURL(d.cfg.Host), apiMessage(err))
	}
	return fmt.Errorf("kube: reading API discovery at %s: %w", safeURL(d.cfg.Host), err)
}

// corefileDomain finds the zone of the kubernetes plugin in a Corefile, e.g. "cluster.local" in
// `kubernetes cluster.local in-addr.arpa ip6.arpa {`. Reverse zones are skipped.
func corefileDomain(corefile string) (string, bool) {
	for _, line := range strings.Split(corefile, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "kubernetes" {
			continue
		}
		for _, zone := range f[1:] {
			zone, _, brace := strings.Cut(zone, "{")
			zone = strings.TrimSuffix(zone, ".")
			if zone != "" && !strings.HasSuffix(zone, "in-addr.arpa") && !strings.HasSuffix(zone, "ip6.arpa") {
				return zone, true
			}
			if brace {
				break
			}
		}
	}
	return "", false
}

// withDefaultTimeout bounds ctx by d.opts.WaitTimeout unless it already has a deadline.
func (d *driver) withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d.opts.WaitTimeout)
}

// ns returns ns, or the default namespace when it is empty.
func (d *driver) ns(ns string) string {
	if ns != "" {
		return ns
	}
	return d.namespace
}

// htmlAnswers refuses a successful answer that is an HTML page: no API server sends one, and
// a server that does (a proxy's or a single sign-on's page, a web server on the wrong port)
// failed the step with client-go's "serializer for text/html doesn't exist", which says
// nothing of the server. A failed answer is left to client-go, which quotes its body and
// retries it where it may.
type htmlAnswers struct{ http.RoundTripper }

func (t htmlAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/html" {
		return resp, nil
	}
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	resp.Body.Close()
	server := req.URL.Scheme + "://" + req.URL.Host
	return nil, fmt.Errorf("the server answered with an HTML page (%s), not the Kubernetes API's JSON: is %s the cluster's API server, with no proxy or sign-in page before it? The page begins %q",
		resp.Status, server, dsl.Truncate(string(page), 80))
}

// retriedAnswers tells the step whose request it is (schema.NoteRetriedAnswer) of an answer
// client-go retries without returning it: 429 Too Many Requests, or a 5xx with Retry-After.
// A step whose time ran out while the client waited to retry said "get timed out after 3s",
// not that the API server was refusing it.
type retriedAnswers struct{ http.RoundTripper }

func (t retriedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	retryAfter := resp.Header.Get("Retry-After")
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && retryAfter != "" {
		msg := fmt.Sprintf("the API server answered %s to %s %s", resp.Status, req.Method, req.URL.Path)
		if n, err := strconv.Atoi(retryAfter); err == nil {
			msg += fmt.Sprintf(", asking to retry after %s", time.Duration(n)*time.Second)
		}
		schema.NoteRetriedAnswer(req.Context(), msg+" (the client retries it)")
	}
	return resp, nil
}
