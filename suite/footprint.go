// Package suite runs many runs of scenarios as one suite on a shared world. Before anything
// runs it works out what each run touches that another run could also touch — its fixed
// namespaces, Istio configuration that is seen mesh-wide, cluster-scoped objects, fixed local
// addresses (Footprint) — and schedules the runs so that at most N run at once and no two
// that overlap ever run at the same time (Schedule for the plan, Run for the run). The
// isolation lint (Leaks) says which objects make a scenario overlap with others mesh-wide,
// and the fix.
//
// The schedule is a list of jobs with their footprints; it knows nothing of how a job runs,
// so that anything that splits a suite (shards, another process) can reuse it.
package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Resource is something a run touches that another run may not touch at the same time.
type Resource struct {
	// Key names it: "namespace conn-lab", "host api.example.com", "mesh",
	// "address 127.0.0.2:8080", "cluster CustomResourceDefinition/widgets.example.com".
	Key string `json:"key"`
	// Shared: the run only depends on it (several may hold it at once); otherwise it changes
	// it, and no other run may hold it meanwhile.
	Shared bool `json:"shared,omitempty"`
	// Why says what in the scenario takes it, and Pos where that is written.
	Why string  `json:"why"`
	Pos dsl.Pos `json:"pos"`
}

// Leak is a finding of the isolation lint: an object whose effect reaches beyond the run's
// own namespaces, so that another run of the suite can see it (or see its absence).
type Leak struct {
	Pos      dsl.Pos `json:"pos"`
	Scenario string  `json:"scenario"`
	// Msg says what leaks and to whom; Fix how to keep it to the run's namespace.
	Msg string `json:"message"`
	Fix string `json:"fix"`
}

// LintCode is the code of the isolation lint's warnings.
const LintCode = "mesh-wide"

func (l Leak) String() string {
	return fmt.Sprintf("%s: warning[%s]: %s; %s", l.Pos, LintCode, l.Msg, l.Fix)
}

// istioGateways are the selectors of the gateways Istio installs in its root namespace.
var istioGateways = map[string]bool{
	"istio=ingressgateway": true, "istio=egressgateway": true,
	"app=istio-ingressgateway": true, "app=istio-egressgateway": true,
}

// meshNamespaces are the namespaces whose workloads every run on the cluster depends on, and
// what they run.
var meshNamespaces = map[string]string{
	RootNamespace: "Istio's root namespace (istiod, the mesh config, mesh-wide policies)",
	"kube-system": "where the cluster's DNS (CoreDNS) and kube-proxy run",
}

// RootNamespace is Istio's root namespace (meshConfig.rootNamespace's default): its Sidecar,
// EnvoyFilter and policies apply to the whole mesh.
const RootNamespace = "istio-system"

// meshPolicies are the Istio kinds whose objects in the root namespace apply to every
// namespace's workloads.
var meshPolicies = map[string]bool{
	"Sidecar": true, "EnvoyFilter": true, "PeerAuthentication": true, "AuthorizationPolicy": true,
	"RequestAuthentication": true, "Telemetry": true, "WasmPlugin": true, "ProxyConfig": true,
}

// Footprint is what a run of sc on the named target touches, and the isolation lint's
// findings. Ephemeral namespaces are the run's own and touch nothing another run has; fixed
// namespaces are changed; on kube every run depends on the mesh's configuration (Shared
// "mesh"), which a mesh-wide policy changes (so do a wildcard host over every Service, an
// admission webhook, Istio's CRDs, and a run declaring istio-system or kube-system). The
// hosts a run calls (load URLs, URLs in an exec's argv) it depends on (Shared "host ..."; on
// the local target "address ..."), and pods it reads or drives in a fixed namespace it does
// not declare (a shared gateway) it holds by that namespace. ${vars.name} is read with the
// run's vars; other ${...} are known only when the run starts, and take nothing.
func Footprint(sc *dsl.Scenario, target string) ([]Resource, []Leak) {
	f := footprintOf(sc, target)
	return f.res, f.leaks
}

// NotSeen says, one phrase each, what the commands of a run of sc on this machine may write
// that Footprint does not see (a path known only when the command runs, a program whose files
// labrun does not know): two runs sharing such a file are not kept apart. Each phrase begins
// with the step ("exec w writes $OUT, a path known only when it runs").
func NotSeen(sc *dsl.Scenario, target string) []string {
	return footprintOf(sc, target).unseen
}

func footprintOf(sc *dsl.Scenario, target string) *footprint {
	f := &footprint{sc: sc, verb: "applies", kube: target == "kube"}
	for _, ns := range sc.Namespaces {
		why := "declares namespace " + ns
		if len(sc.Clusters) > 1 {
			why += " (in each of its clusters, " + strings.Join(sc.ClusterNames(), ", ") + ")"
		}
		f.take(Resource{Key: "namespace " + ns, Why: why, Pos: sc.Pos})
	}
	if target == "kube" {
		f.take(Resource{Key: "mesh", Shared: true, Why: "runs on the cluster's mesh", Pos: sc.Pos})
	}
	if l := sc.Local; l != nil && target != "kube" {
		for _, n := range sortedKeys(l.Backends) {
			f.address(l.Backends[n].Address, "local backend "+n)
		}
		for _, n := range sortedKeys(l.Blackholes) {
			f.address(l.Blackholes[n].Address, "local blackhole "+n)
		}
		if l.DNS != nil {
			f.address(l.DNS.Address, "the local DNS server")
		}
	}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			// probe p30 #4: in a scenario of several clusters, what a step takes says the
			// cluster it runs on. The keys do not tell clusters apart: a cluster's name is
			// the scenario's own, its context given at run time, so another run's cluster
			// may be the same one (and in a multi-primary mesh each istiod reads the other
			// cluster's endpoints): namespace X in west overlaps namespace X of any run.
			f.where = ""
			if len(sc.Clusters) > 1 {
				f.where = "; in cluster " + sc.ClusterOf(s)
			}
			if target == "kube" {
				f.pods(s)
				f.reads(s)
			}
			switch p := s.Params.(type) {
			case *schema.Load:
				var from *schema.PodRef
				if p.From != nil {
					from = &p.From.PodRef
				}
				f.url(s, target, p.URL, podNamespace(sc, from), "url")
				// probe p109: two loads of one fixed local address (a server no run starts,
				// an Envoy on fixed ports) ran at once, each measuring the server under the
				// other's requests too (its latency, its queue, what it sheds, the counters a
				// snapshot reads): a load holds the address it sends to.
				if target != "kube" && p.From == nil {
					if host, port, scheme, ok := hostOf(f.static(p.URL)); ok {
						if port == "" {
							port = map[string]string{"http": "80", "https": "443"}[scheme]
						}
						addr := net.JoinHostPort(host, port)
						if key, ok := f.addressKey(addr); ok {
							f.take(Resource{Key: key, Why: fmt.Sprintf("%s sends its requests to %s, whose server's latency, queue and counters another run's load there changes", who(s), addr), Pos: s.FieldPos("url")})
						}
					}
				}
				// probe p30 fresh: a Host header (through the ingress gateway, the Istio
				// tasks' way) is the host the request is routed as.
				for k, v := range p.Headers {
					if strings.EqualFold(k, "host") && target == "kube" {
						f.calls(s, "http://"+strings.TrimSpace(f.static(v))+"/", f.static(podNamespace(sc, from)), "headers."+k)
					}
				}
			case *schema.Config:
				if target == "kube" {
					f.config(s, p, f.static(podNamespace(sc, p.Envoy)))
				}
			case *schema.DNS:
				// probe p25 #17: the records of a lab DNS server that pods resolve through
				// (a server in a fixed namespace) are every caller's answer for that host.
				if h := strings.ToLower(strings.TrimSuffix(f.static(p.Host), ".")); target == "kube" && p.Server != nil && h != "" && !dsl.HasInterpolation(h) {
					f.take(Resource{Key: "host " + h, Why: fmt.Sprintf("%s sets the records of %s", who(s), h), Pos: s.FieldPos("host")})
				}
			case *schema.Snapshot:
				// probe p109: a snapshot of an Envoy's admin (or a Prometheus endpoint) at a
				// fixed local address reads counters that every run's traffic through it
				// moves: two runs each taking a delta of one Envoy ran at once.
				if target != "kube" {
					for field, raw := range map[string]string{"admin": p.Admin, "prometheus": p.Prometheus} {
						if raw == "" {
							continue
						}
						addr := f.static(raw)
						if !strings.Contains(addr, "://") {
							addr = "http://" + addr
						}
						if host, port, scheme, ok := hostOf(addr); ok {
							if port == "" {
								port = map[string]string{"http": "80", "https": "443"}[scheme]
							}
							a := net.JoinHostPort(host, port)
							if key, ok := f.addressKey(a); ok {
								f.take(Resource{Key: key, Why: fmt.Sprintf("%s reads the counters of %s, which another run's traffic through it moves", who(s), a), Pos: s.FieldPos(field)})
							}
						}
					}
				}
				if target == "kube" && p.Cluster != "" {
					f.cluster(s, p.Cluster, f.static(podNamespace(sc, p.Envoy)))
				}
			case *schema.Exec:
				// probe p25 #11: curl http://httpbin.org/ in an exec (the Istio tasks' way)
				// beside a run registering httpbin.org for every namespace.
				for i, arg := range p.Argv {
					for _, u := range urlIn.FindAllString(arg, -1) {
						f.url(s, target, u, or(p.Namespace, sc.DefaultNamespace()), fmt.Sprintf("argv.%d", i))
					}
				}
				// probe p30 fresh: curl -H "Host: bookinfo.example.com" through a gateway,
				// and an IP written without a URL (nc -z 240.0.0.10 5432).
				if target == "kube" {
					for i, arg := range append(slices.Clone(p.Argv), p.Stdin) {
						field := fmt.Sprintf("argv.%d", i)
						if i == len(p.Argv) {
							field = "stdin"
						}
						for _, m := range hostHeaderIn.FindAllStringSubmatch(f.static(arg), -1) {
							f.calls(s, "http://"+m[1]+"/", f.static(or(p.Namespace, sc.DefaultNamespace())), field)
						}
						for _, ip := range ipIn.FindAllString(urlIn.ReplaceAllString(f.static(arg), ""), -1) {
							f.calls(s, "http://"+ip+"/", "", field)
						}
					}
				}
				// probe p30 fresh: curl httpbin.org/headers, with no scheme (curl reads
				// it as http://).
				static := make([]string, len(p.Argv))
				for i, a := range p.Argv {
					static[i] = f.static(a)
				}
				for _, u := range append(fetchedURLs(static), fetchedURLs([]string{"sh", "-c", f.static(p.Stdin)})...) {
					f.url(s, target, u, or(p.Namespace, sc.DefaultNamespace()), "argv")
				}
				// probe p30 #2: the URLs of a script given on stdin, or of a script file a
				// shell on this machine runs (sh check.sh), are called as well.
				for _, u := range urlIn.FindAllString(p.Stdin, -1) {
					f.url(s, target, u, or(p.Namespace, sc.DefaultNamespace()), "stdin")
				}
				if !p.InPod() {
					if script, ok := f.scriptFile(p.Argv); ok {
						for _, u := range urlIn.FindAllString(script, -1) {
							f.url(s, target, u, or(p.Namespace, sc.DefaultNamespace()), "argv")
						}
					}
				}
				// Two runs of a folder's scenarios run their commands in its folder: one
				// writing state.txt beside another writing or reading it read each other's
				// file (probe p42).
				if !p.InPod() {
					f.localFiles(s, p.Argv, p.Stdin, p.Env, sc.Dir)
				}
				// probe p25 #19: a command on this machine changing the cluster (kubectl
				// rollout restart deployment/istiod, istioctl install) is no step the
				// namespace guard sees: what it changes is unknown, so it holds the mesh.
				// probe p30 #3: so does any command not known to only read (python3
				// patch.py, ./setup.sh, kubectl run): conservative, it runs alone.
				if target == "kube" && !p.InPod() {
					f.localCommand(s, p.Argv, p.Stdin)
				}
				// probe p30 fresh: kubectl in a pod (with its service account) changes the
				// cluster as much as on this machine.
				if target == "kube" && p.InPod() {
					static := make([]string, len(p.Argv))
					for i, a := range p.Argv {
						static[i] = f.static(a)
					}
					if what, ok := podClusterChange(static, f.static(p.Stdin)); ok {
						f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s runs %q in a pod, a change of the cluster through its API that no namespace guard sees", who(s), what), Pos: s.FieldPos("argv")})
					}
				}
			case *schema.Logs:
				// probe p109: a log file on this machine read since a mark gets the lines
				// another run's command writes there meanwhile (a relative path is in the
				// scenario's folder, where the local driver reads it).
				if file := f.static(p.File); target != "kube" && file != "" && !dsl.HasInterpolation(file) {
					abs := file
					if !filepath.IsAbs(abs) {
						abs = filepath.Join(sc.Dir, abs)
					}
					f.take(Resource{Key: "file " + filepath.Clean(abs), Shared: true, Why: fmt.Sprintf("%s reads %s on this machine", who(s), file), Pos: s.FieldPos("file")})
				}
			case *schema.Apply:
				f.objects(s, target, p.Objects, p.Files, or(p.Namespace, sc.DefaultNamespace()))
			case *schema.Delete:
				// probe p25 #10: deleting an object changes what it configured as much as
				// applying it (Istio's injector webhook, a CRD another run applies). What a
				// delete removes leaks nothing: the lint is about what a run adds.
				n := len(f.leaks)
				f.verb = "deletes"
				f.objects(s, target, p.Objects, p.Files, or(p.Namespace, sc.DefaultNamespace()))
				f.verb, f.leaks = "applies", f.leaks[:n]
				if kind := f.static(p.Kind); p.All && clusterScoped[kind] {
					// Every object of a cluster-scoped kind its selector picks, not only
					// the run's own: Istio's webhooks or CRDs among them.
					why := fmt.Sprintf("deletes every %s (all: true)", kind)
					if p.Selector != "" {
						why = fmt.Sprintf("deletes every %s that %s picks (all: true)", kind, p.Selector)
					}
					f.take(Resource{Key: "mesh", Why: why, Pos: s.FieldPos("all")})
				}
			case *schema.Process:
				if target == "kube" {
					f.localCommand(s, p.Argv, "")
				}
				f.localFiles(s, p.Argv, "", p.Env, filepath.Join(sc.Dir, f.static(p.Dir)))
				// probe p30 #2: a server binding a fixed port written in its arguments
				// (fortio server -http-port 8080, python3 -m http.server 18080) holds it,
				// ready check or none.
				f.processPorts(s, p.Argv)
				if r := p.Ready; r != nil {
					if r.TCP != "" {
						f.address(r.TCP, fmt.Sprintf("%s (%s)", who(s), s.Pos))
					}
					if host, port, _, ok := hostOf(f.static(r.HTTP)); r.HTTP != "" && ok {
						f.address(net.JoinHostPort(host, port), fmt.Sprintf("%s (%s)", who(s), s.Pos))
					}
				}
			}
		})
	}
	f.where = ""
	for _, ns := range sc.Namespaces {
		if why := meshNamespaces[ns]; why != "" && target == "kube" {
			// probe p25 #02: scaling istiod (or CoreDNS) to 0 held only its namespace,
			// while the runs beside it measured through it. (After the steps: an object
			// that changes the mesh is the plainer reason.)
			f.take(Resource{Key: "mesh", Why: fmt.Sprintf("declares namespace %s, %s: what it changes there reaches every run", ns, why), Pos: sc.Pos})
		}
	}
	sort.SliceStable(f.res, func(i, j int) bool { return f.res[i].Key < f.res[j].Key })
	return f
}

// servicesKey is what a run holds, shared, when it applies or deletes a Service (seen by
// every proxy of the mesh, in its routes, listeners and clusters), and alone when it reads
// a whole route, listener, list of names or config dump, which list them all.
const servicesKey = "services"

// metaAnnotation is the annotation key of an object's metadata.
func metaAnnotation(md map[string]any, key string) (string, bool) {
	a, _ := md["annotations"].(map[string]any)
	v, ok := a[key].(string)
	return v, ok
}

type footprint struct {
	kube  bool // the run is on the kube target
	sc    *dsl.Scenario
	res   []Resource
	leaks []Leak
	verb  string // what the step does to the objects object is given: applies, deletes
	where string // "; in cluster west": the cluster of the step whose holds are taken
	// unseen: what the run's commands may write that no key holds (see NotSeen)
	unseen []string
}

// take adds r, unless the footprint has its key already (an exclusive hold wins).
func (f *footprint) take(r Resource) {
	r.Why += f.where
	for i, have := range f.res {
		if have.Key == r.Key {
			if have.Shared && !r.Shared {
				f.res[i] = r
			}
			return
		}
	}
	f.res = append(f.res, r)
}

// address takes a fixed local address (a port of 0 or none is picked free at run time).
func (f *footprint) address(addr, who string) {
	if key, ok := f.addressKey(addr); ok {
		f.take(Resource{Key: key, Why: who + " listens on " + addr, Pos: f.sc.Pos})
	}
}

// objects takes what the objects of an apply or delete step touch: those written in it and
// those of its files, each in namespace ns unless it names its own.
func (f *footprint) objects(s *dsl.Step, target string, objs []schema.Object, files []string, ns string) {
	for i, o := range objs {
		f.object(s, fmt.Sprintf("objects.%d", i), o, ns)
	}
	for i, file := range files {
		for _, o := range f.file(s, fmt.Sprintf("files.%d", i), file, target) {
			f.object(s, fmt.Sprintf("files.%d", i), o, ns)
		}
	}
}

// podNamespace is the namespace of the pods ref names: its own, else the scenario's default.
func podNamespace(sc *dsl.Scenario, ref *schema.PodRef) string {
	if ref != nil && ref.Namespace != "" {
		return ref.Namespace
	}
	return sc.DefaultNamespace()
}

// use takes a fixed local address the run connects to (Shared: it only depends on it).
func (f *footprint) use(addr, why string, pos dsl.Pos) {
	if key, ok := f.addressKey(addr); ok {
		f.take(Resource{Key: key, Shared: true, Why: why, Pos: pos})
	}
}

// scriptFile is the text of the script file a shell on this machine runs (sh check.sh,
// bash -e ./setup.sh), read from the scenario's directory, and false when argv runs none or
// the file cannot be read before the run.
func (f *footprint) scriptFile(argv []string) (string, bool) {
	if len(argv) < 2 || !shells[filepath.Base(argv[0])] {
		return "", false
	}
	for _, a := range argv[1:] {
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && strings.HasSuffix(a, "c") && !strings.HasPrefix(a, "--")):
			return "", false
		case strings.HasPrefix(a, "-") || a == "pipefail":
			continue
		}
		file := f.static(a)
		if dsl.HasInterpolation(file) {
			return "", false
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(f.sc.Dir, file)
		}
		data, err := os.ReadFile(file)
		return string(data), err == nil
	}
	return "", false
}

// processPorts takes the fixed ports a local process's arguments name (bound on every
// address, as far as can be known): a host:port or :port word, the value of a flag naming a
// port (--port 8080, -p 8080, -http-port=8080), and a bare number from 1024 up (python3 -m
// http.server 18080). It may take a port the process only calls, which can only keep runs
// apart.
func (f *footprint) processPorts(s *dsl.Step, argv []string) {
	var words []string
	for _, a := range argv {
		a = f.static(a)
		if strings.ContainsAny(a, " \t\n") {
			words = append(words, shellWords(strings.NewReplacer(";", " ", "&", " ", "|", " ", "\n", " ").Replace(a))...)
		} else {
			words = append(words, a)
		}
	}
	if len(words) > 0 && filepath.Base(words[0]) == "sleep" {
		return
	}
	n := len(f.res)
	defer func() {
		if len(f.res) > n || len(words) == 0 {
			return
		}
		// No port written: a server's default (fortio server's 8080).
		for _, d := range defaultPorts {
			if len(words) >= len(d.argv) && filepath.Base(words[0]) == d.argv[0] && slices.Equal(words[1:len(d.argv)], d.argv[1:]) {
				for _, port := range d.ports {
					f.take(Resource{Key: "address *:" + port, Why: fmt.Sprintf("%s may listen on port %s, %s's default (%s)", who(s), port, strings.Join(d.argv, " "), strings.Join(words, " ")), Pos: s.FieldPos("argv")})
				}
			}
		}
	}()
	f.configPorts(s, words)
	for i, w := range words {
		var port string
		host := "*"
		if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") && strings.Contains(strings.ToLower(w), "port") {
			w = v
		}
		switch {
		case strings.Contains(w, "://"):
			continue // a URL it calls
		case strings.Contains(w, ":"):
			h, p, err := net.SplitHostPort(w)
			if err != nil {
				continue
			}
			port = p
			if _, err := strconv.Atoi(h); err == nil {
				port, host = h, "127.0.0.1" // kubectl port-forward's LOCAL:REMOTE, on localhost
			} else if h != "" && h != "0.0.0.0" && h != "::" {
				host = h
			}
		case i > 0 && (words[i-1] == "-p" || strings.Contains(strings.ToLower(words[i-1]), "port")) && strings.HasPrefix(words[i-1], "-"):
			port = w
		default:
			if n, err := strconv.Atoi(w); err == nil && n >= 1024 {
				port = w
			}
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			continue
		}
		if host == "localhost" {
			host = "127.0.0.1"
		}
		f.take(Resource{Key: "address " + net.JoinHostPort(host, port), Why: fmt.Sprintf("%s may listen on port %s (%s)", who(s), port, strings.Join(words, " ")), Pos: s.FieldPos("argv")})
	}
}

// configExts are the extensions of the configuration files a process's arguments name whose
// ports configPorts reads.
var configExts = map[string]bool{".yaml": true, ".yml": true, ".json": true, ".conf": true, ".cfg": true, ".toml": true, ".ini": true}

// portSetting is a setting of a configuration file that may name a port the process listens
// on: a key with port, listen, bind or addr in its name, then its value (port_value: 18080,
// "listen": "127.0.0.1:18080", listen 8080;).
var portSetting = regexp.MustCompile(`(?i)\b\w*(?:port|listen|bind|addr)\w*["']?[ \t]*[:=]?[ \t]*["']?([\w.\-\[\]:]+)`)

// configPorts takes the fixed ports named in the configuration files a local process's
// arguments name (envoy -c envoy.yaml, --config=srv.json), read from the scenario's
// directory before the run: probe p30 left them unread, and an Envoy listening on the port a
// run's backend serves on ran beside it. Like processPorts it may take a port the process
// only calls (an Envoy cluster's endpoint), which can only keep runs apart.
func (f *footprint) configPorts(s *dsl.Step, words []string) {
	for i, w := range words {
		if i == 0 {
			continue
		}
		if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
			w = v
		}
		if !configExts[strings.ToLower(filepath.Ext(w))] || dsl.HasInterpolation(w) {
			continue
		}
		file := w
		if !filepath.IsAbs(file) {
			file = filepath.Join(f.sc.Dir, file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, m := range portSetting.FindAllStringSubmatch(string(data), -1) {
			host, port := "*", m[1]
			if h, p, err := net.SplitHostPort(m[1]); err == nil {
				port = p
				if h != "" && h != "0.0.0.0" && h != "::" && h != "*" {
					host = h
				}
			}
			if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
				continue
			}
			if host == "localhost" {
				host = "127.0.0.1"
			}
			f.take(Resource{Key: "address " + net.JoinHostPort(host, port), Why: fmt.Sprintf("%s may listen on port %s, named in %s", who(s), port, w), Pos: s.FieldPos("argv")})
		}
	}
}

// addressKey is the resource key of a fixed local address, and false for one with no fixed
// port or known only when the run starts.
func (f *footprint) addressKey(addr string) (string, bool) {
	addr = f.static(addr)
	if addr == "" || dsl.HasInterpolation(addr) {
		return "", false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" || port == "" {
		return "", false
	}
	switch host {
	case "localhost":
		host = "127.0.0.1"
	case "", "0.0.0.0", "::":
		host = "*" // every address of the machine (Go's ":8080")
	}
	return "address " + net.JoinHostPort(host, port), true
}

// pods takes the fixed namespace of the pods a step reads or drives when the run does not
// declare it (reading a pod, or a command in it, changes nothing for the namespace guard):
// a shared pod, such as the ingress gateway in istio-system, whose counters, logs and
// configuration the traffic and commands of other runs reach. probe p25 #08: two runs that
// snapshot the ingress gateway while loading through it ran at once, each delta counting the
// other's requests, and one that reset its counters (exec pilot-agent request POST
// reset_counters) ran beside them.
func (f *footprint) pods(s *dsl.Step) {
	var ref *schema.PodRef
	var field, what string
	switch p := s.Params.(type) {
	case *schema.Snapshot:
		ref, field, what = p.Envoy, "envoy", "snapshots the Envoy of"
	case *schema.Config:
		ref, field, what = p.Envoy, "envoy", "reads the Envoy configuration of"
	case *schema.Logs:
		if p.Process == "" {
			ref, field, what = &p.PodRef, "namespace", "reads the logs of"
		}
	case *schema.Exec:
		if p.Pod != "" || p.Selector != "" { // else a command on this machine
			ref, field, what = &schema.PodRef{Pod: p.Pod, Selector: p.Selector, Namespace: p.Namespace}, "namespace", "runs a command in"
		}
	case *schema.Load:
		if p.From != nil {
			ref, field, what = &p.From.PodRef, "from", "sends load from"
		}
	}
	if ref == nil {
		return
	}
	ns, ok := f.foreign(ref.Namespace)
	if !ok {
		return // the run's own namespace (held already), or one known only when it runs
	}
	pods := or(f.static(ref.Pod), f.static(ref.Selector))
	f.take(Resource{Key: "namespace " + ns, Why: fmt.Sprintf("%s %s pods %s in %s, which other runs' traffic and commands reach", who(s), what, pods, ns), Pos: s.FieldPos(field)})
}

// defaultNS names, in a resource key, the namespace of the steps of a scenario that declares
// none: the invocation's (run -n, else the kubeconfig's), the same for every run of it.
const defaultNS = "(the default namespace)"

// foreign returns the fixed namespace a step names (ns, or the scenario's default when ns is
// "") when the run does not declare it: another run's, or shared. false: the run's own
// (declared, so held already; or ephemeral), or one known only when the run starts.
// probe p25 #16: a scenario declaring no namespace works in the invocation's, which every
// such run shares (two of them loading from and snapshotting one client ran at once).
func (f *footprint) foreign(ns string) (string, bool) {
	ns = or(f.static(ns), f.sc.DefaultNamespace())
	switch {
	case ns == "":
		return defaultNS, true
	case f.unique(ns), slices.Contains(f.sc.Namespaces, ns), dsl.HasInterpolation(ns):
		return "", false
	}
	return ns, true
}

// config takes what a config step's reading depends on: the host of the outbound cluster it
// reads (cluster, endpoints), or every host (shared "host *") when it reads a route, a
// listener, the names of a kind or the whole dump, which hold the virtual hosts, filter chains
// and clusters of every host its Envoy sees. probe p25 #14: a run judging
// len(r.virtual_hosts) of route 80 ran beside one registering httpbin.org:80 for every
// namespace. (Services of other runs' namespaces appear there too: not held.)
func (f *footprint) config(s *dsl.Step, p *schema.Config, ns string) {
	name := or(p.Cluster, p.Endpoints)
	if name == "" {
		what := "the config dump"
		switch {
		case p.Route != "":
			what = "route " + p.Route
		case p.Listener != "":
			what = "listener " + p.Listener
		case p.Names != "":
			what = "the names of its " + p.Names
		}
		f.take(Resource{Key: "host *", Shared: true, Why: fmt.Sprintf("%s reads %s, which holds every host its Envoy sees", who(s), what), Pos: s.Pos})
		// probe p30 #1: it lists the Services of every namespace too, those of other runs'
		// ephemeral namespaces included, which hold no host: a run applying or deleting
		// any Service changes what it reads (two runs judging len(r.virtual_hosts) of route
		// 80, each with its own backend, each saw the other's).
		f.take(Resource{Key: servicesKey, Why: fmt.Sprintf("%s reads %s, which lists every Service of the mesh, other runs' too", who(s), what), Pos: s.Pos})
		return
	}
	f.cluster(s, name, ns)
}

// cluster takes, shared, the host of an Envoy cluster a step reads (config, snapshot): its
// configuration (a DestinationRule's pool, a VirtualService's routes) is what the step
// measures.
func (f *footprint) cluster(s *dsl.Step, name, ns string) {
	parts := strings.Split(f.static(name), "|")
	if len(parts) != 4 || parts[0] != "outbound" {
		return // inbound, PassthroughCluster, BlackHoleCluster: the pod's own, or the mesh's
	}
	// A cluster's host is written in full (as a ServiceEntry's is): a Service's ends in .svc.<domain>.
	fq, own := f.qualify(parts[3], ns, "ServiceEntry")
	if own || dsl.HasInterpolation(fq) {
		return
	}
	f.take(Resource{Key: "host " + fq, Shared: true, Why: fmt.Sprintf("%s reads the cluster of %s", who(s), parts[3]), Pos: s.Pos})
}

// reads takes, shared, the fixed namespace a get, wait or events step reads objects of when
// the run does not declare it (reading is no mutation for the guard). probe p25 #13: a run
// waiting for the rollout of deployment/web in namespace shared ran beside the run that
// declares shared and scales web to 0.
func (f *footprint) reads(s *dsl.Step) {
	var nss []string
	switch p := s.Params.(type) {
	case *schema.Get:
		nss = append(nss, p.Namespace)
	case *schema.Events:
		nss = append(nss, p.Namespace)
	case *schema.Wait:
		nss = append(nss, p.Namespace)
		objs := []schema.Object{p.Match, p.Absent}
		for _, file := range append(append([]string{}, p.MatchFiles...), p.AbsentFiles...) {
			o, _ := readObjectsErr(f.sc.Dir, f.static(file))
			objs = append(objs, o...)
		}
		for _, o := range objs {
			md, _ := o["metadata"].(map[string]any)
			if ns, _ := md["namespace"].(string); ns != "" {
				nss = append(nss, ns)
			}
		}
	}
	for _, ns := range nss {
		ns, ok := f.foreign(ns)
		if !ok {
			continue
		}
		f.take(Resource{Key: "namespace " + ns, Shared: true, Why: fmt.Sprintf("%s reads objects of %s", who(s), ns), Pos: s.Pos})
	}
}

// static is s with each ${vars.name} replaced by the var's value, known before the run (the
// scenario is loaded with its run's vars); other ${...} stay as written. probe p25 #06: a
// VirtualService for hosts ["${vars.h}"] was read as a Service of the run's own namespace,
// and apply.files ["${vars.f}"] as a file not there yet, so they held nothing.
func (f *footprint) static(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range varRef.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && s[m[0]-1] == '$' {
			continue // $${ writes a literal ${
		}
		var v string
		switch x := f.sc.Vars[s[m[2]:m[3]]].(type) {
		case string:
			v = x
		case float64, int, int64, bool:
			v = fmt.Sprint(x)
		default:
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

var varRef = regexp.MustCompile(`\$\{\s*vars\.(\w+)\s*\}`)

// unique reports whether a namespace is the run's own: one of its ephemeral namespaces
// (as written before the run: "${ns.key}", or a ${...} that reads ns).
func (f *footprint) unique(ns string) bool {
	return strings.Contains(ns, "${") && readsNS.MatchString(ns)
}

var readsNS = regexp.MustCompile(`(^|[^.\w])ns(\.|\[)`)

// object takes what an applied object touches beyond its namespace.
func (f *footprint) object(s *dsl.Step, field string, o schema.Object, defNS string) {
	kind, _ := o["kind"].(string)
	apiVersion, _ := o["apiVersion"].(string)
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if ns == "" {
		ns = defNS
	}
	kind, apiVersion, name, ns = f.static(kind), f.static(apiVersion), f.static(name), f.static(ns)
	spec, _ := o["spec"].(map[string]any)
	pos := s.FieldPos(field)
	what := fmt.Sprintf("%s %s", kind, name)
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	switch {
	case kind == "Namespace":
		if !f.unique(name) {
			f.take(Resource{Key: "namespace " + name, Why: f.verb + " Namespace " + name, Pos: pos})
		}
		return
	case clusterScoped[kind]:
		f.take(Resource{Key: "cluster " + kind + "/" + name, Why: f.verb + " " + what, Pos: pos})
		// probe p25 #05: an admission webhook or policy sees every namespace's objects, and
		// Istio's (or Gateway API's) CRDs are every run's configuration: they held only their
		// own name beside the runs they change.
		if admission[kind] {
			f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s, which the API server applies to every namespace's objects", f.verb, what), Pos: pos})
		} else if kind == "CustomResourceDefinition" && meshCRD(name) {
			f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s, the definition of every run's %s", f.verb, what, name), Pos: pos})
		}
		return
	}
	if kind == "Service" && group == "" && f.kube {
		// Every proxy of the mesh lists every Service (its virtual hosts, clusters and
		// listeners), whatever its namespace, unless it is exported to its own alone.
		if to, _ := metaAnnotation(md, "networking.istio.io/exportTo"); strings.TrimSpace(to) != "." {
			f.take(Resource{Key: servicesKey, Shared: true, Why: fmt.Sprintf("%s %s, which every proxy's routes list", f.verb, what), Pos: pos})
		}
		// A fixed nodePort is the node's port, one Service's in the whole cluster.
		ports, _ := spec["ports"].([]any)
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			if np := fmt.Sprint(pm["nodePort"]); pm["nodePort"] != nil && np != "0" {
				f.take(Resource{Key: "nodePort " + f.static(np), Why: fmt.Sprintf("%s %s with nodePort %s", f.verb, what, np), Pos: pos})
			}
		}
		return
	}
	if group == "gateway.networking.k8s.io" && strings.HasSuffix(kind, "Route") {
		// probe p25 #20: a route attached to a Gateway of a namespace the run does not
		// declare (the shared ingress Gateway of istio-system, open to routes of every
		// namespace) changes that gateway's listeners under the runs that measure it.
		refs, _ := spec["parentRefs"].([]any)
		for _, r := range refs {
			ref, _ := r.(map[string]any)
			pkind, _ := ref["kind"].(string)
			pname, _ := ref["name"].(string)
			pns, _ := ref["namespace"].(string)
			if or(pkind, "Gateway") != "Gateway" {
				continue // a Service (a mesh route): the route's own namespace's clients
			}
			if gns, ok := f.foreign(or(f.static(pns), ns)); ok {
				f.take(Resource{Key: "namespace " + gns, Why: fmt.Sprintf("%s %s attached to Gateway %s of %s", f.verb, what, pname, gns), Pos: pos})
			}
		}
		return
	}
	if kind == "Ingress" && group == "networking.k8s.io" {
		// probe p30 fresh: Istio's ingress gateway (in istio-system) serves the Ingresses
		// of every namespace whose class is istio's (or none): the gateway's routes
		// change under the runs measuring or loading through it.
		if class, _ := spec["ingressClassName"].(string); class == "" || f.static(class) == "istio" {
			f.take(Resource{Key: "namespace " + RootNamespace, Why: fmt.Sprintf("%s %s, served by Istio's ingress gateway in %s", f.verb, what, RootNamespace), Pos: pos})
			f.take(Resource{Key: "gateway istio=ingressgateway", Why: fmt.Sprintf("%s %s, served by Istio's ingress gateway", f.verb, what), Pos: pos})
		}
		return
	}
	if !strings.HasSuffix(group, "istio.io") {
		return
	}
	if kind == "VirtualService" {
		// probe p30 fresh: a VirtualService bound to a Gateway of another namespace (the
		// shared istio-system/ingressgateway) changes that gateway's routes under the runs
		// measuring its pods.
		for _, g := range asStrings(spec["gateways"]) {
			if gns, _, ok := strings.Cut(f.static(g), "/"); ok {
				if gns, ok := f.foreign(gns); ok {
					f.take(Resource{Key: "namespace " + gns, Why: fmt.Sprintf("%s %s bound to Gateway %s", f.verb, what, g), Pos: pos})
				}
			}
		}
	}
	if ns == RootNamespace && meshPolicies[kind] {
		f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s in %s, Istio's root namespace", f.verb, what, RootNamespace), Pos: pos})
		fix := fmt.Sprintf("put it in the scenario's own namespace (%s), where it applies to that namespace only", or(f.sc.DefaultNamespace(), "an ephemeral namespace"))
		if kind == "Sidecar" {
			fix = "put the Sidecar in the scenario's own namespace (without a workloadSelector it is that namespace's default)"
		} else if kind == "EnvoyFilter" {
			fix = "put the EnvoyFilter in the scenario's own namespace with a workloadSelector"
		}
		f.leaks = append(f.leaks, Leak{Pos: pos, Scenario: f.sc.Name,
			Msg: fmt.Sprintf("%s in the root namespace %s applies to every proxy of the mesh: runs beside this one see it", what, RootNamespace), Fix: fix})
		return
	}
	if kind == "Gateway" && group == "networking.istio.io" {
		// probe p25 #09: a Gateway's selector picks gateway pods of every namespace (the
		// shared ingress gateway's, in istio-system): two runs' Gateways for one selector
		// configure the same listeners, and Istio keeps one of two conflicting servers.
		sel, _ := spec["selector"].(map[string]any)
		var labels []string
		for _, k := range sortedKeys(sel) {
			labels = append(labels, fmt.Sprintf("%s=%v", k, sel[k]))
		}
		if len(labels) == 0 {
			f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s, whose empty selector picks every gateway pod", f.verb, what), Pos: pos})
			return
		}
		f.take(Resource{Key: "gateway " + f.static(strings.Join(labels, ",")), Why: fmt.Sprintf("%s %s for the gateway pods %s", f.verb, what, strings.Join(labels, ",")), Pos: pos})
		if istioGateways[strings.Join(labels, ",")] {
			// The gateways Istio installs, in its root namespace: the runs that snapshot or
			// drive their pods hold that namespace.
			f.take(Resource{Key: "namespace " + RootNamespace, Why: fmt.Sprintf("%s %s for Istio's gateway pods %s in %s", f.verb, what, strings.Join(labels, ","), RootNamespace), Pos: pos})
		}
		return
	}
	var hosts []string
	switch kind {
	case "ServiceEntry", "VirtualService":
		for _, h := range asStrings(spec["hosts"]) {
			hosts = append(hosts, f.static(h))
		}
	case "DestinationRule":
		if h, ok := spec["host"].(string); ok {
			hosts = append(hosts, f.static(h))
		}
	default:
		return
	}
	exportTo := asStrings(spec["exportTo"])
	for i := range exportTo {
		exportTo[i] = f.static(exportTo[i])
	}
	if exportedLocally(exportTo) {
		// Seen by the namespaces it names: a fixed one is another run's (probe p25 #03: a
		// DestinationRule exported to ["lab"] held nothing of lab, whose run it configures).
		for _, to := range exportTo {
			if to != "." && to != "~" && to != ns && !f.unique(to) {
				f.take(Resource{Key: "namespace " + to, Why: fmt.Sprintf("exports %s to namespace %s", what, to), Pos: pos})
			}
		}
		return
	}
	if ns == RootNamespace && kind == "DestinationRule" && slices.ContainsFunc(hosts, func(h string) bool { return strings.HasPrefix(h, "*") }) {
		// Istio falls back to the root namespace's DestinationRules for every client and
		// Service that has none of its own: a wildcard there is every run's traffic policy.
		f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s for hosts %s in %s, Istio's root namespace", f.verb, what, strings.Join(hosts, ", "), RootNamespace), Pos: pos})
		f.leaks = append(f.leaks, Leak{Pos: pos, Scenario: f.sc.Name,
			Msg: fmt.Sprintf("%s for %s in the root namespace %s is the traffic policy of every Service of the mesh without a DestinationRule of its own: runs beside this one get it", what, strings.Join(hosts, ", "), RootNamespace),
			Fix: "put it in a namespace of the scenario's own, for the scenario's hosts"})
		return
	}
	var shared []string
	ownNS := false // a host is a Service of the object's own (fixed) namespace
	for _, h := range hosts {
		fq, own := f.qualify(h, ns, kind)
		if own {
			continue // a host in the run's own namespace: no other run configures it
		}
		ownNS = ownNS || strings.HasSuffix(fq, "."+ns+".svc")
		shared = append(shared, fq)
		f.take(Resource{Key: "host " + fq, Why: fmt.Sprintf("%s %s for host %s, exported to every namespace", f.verb, what, h), Pos: pos})
		if coversServices(fq) {
			// probe p25 #01: a pattern over every Service ("*", "*.svc.cluster.local",
			// "*.local") is the configuration of every run's traffic, whose own Services are
			// in ephemeral namespaces that hold no host.
			f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s for host %s, every Service of the mesh, exported to every namespace", f.verb, what, h), Pos: pos})
		}
	}
	if len(shared) == 0 {
		return
	}
	msg := fmt.Sprintf("%s configures %s for every namespace (no exportTo): a run beside this one that talks to %s gets this configuration", what, strings.Join(shared, ", "), plural(len(shared), "that host", "those hosts"))
	fix := `add exportTo: ["."] to keep it to its own namespace`
	if kind == "ServiceEntry" {
		msg = fmt.Sprintf("%s adds %s to the registry of every namespace (no exportTo): a run beside this one resolves %s through it", what, strings.Join(shared, ", "), plural(len(shared), "that host", "those hosts"))
	}
	if ownNS && len(f.sc.Ephemeral) == 0 {
		fix += ", and put the scenario in an ephemeral namespace (ephemeralNamespaces) so that its hosts are its own"
	}
	f.leaks = append(f.leaks, Leak{Pos: pos, Scenario: f.sc.Name, Msg: msg, Fix: fix})
}

// qualify turns a host as Istio reads it in namespace ns into one name: a short name is a
// Service of ns, "name.ns" a Service of ns, and a name ending in .svc or .svc.<domain> is cut
// to name.ns.svc (the cluster domain does not tell two Services apart). own says the host is
// a Service of one of the run's ephemeral namespaces.
func (f *footprint) qualify(host, ns, kind string) (string, bool) {
	h := strings.TrimSuffix(host, ".")
	if i := strings.Index(h, ".svc."); i >= 0 {
		h = h[:i+4]
	}
	parts := splitHost(h)
	switch {
	case strings.HasPrefix(h, "*"):
		// A wildcard ("*", "*.local", "*.example.com") is a pattern over full names, never
		// a short name of the object's namespace: "*.local" was read as Service * of
		// namespace local.
	case kind == "ServiceEntry" && !strings.HasSuffix(h, ".svc"):
		// A ServiceEntry's host is a name of its own (an external host, or a mesh-internal
		// name), written as it is resolved.
	case len(parts) == 1:
		h = h + "." + ns + ".svc"
	case len(parts) == 2:
		h = h + ".svc"
	}
	parts = splitHost(h)
	if len(parts) == 3 && parts[2] == "svc" && f.unique(parts[1]) {
		return h, true
	}
	return h, false
}

// coversServices says whether a host pattern (as qualify leaves it) covers the Services of
// every namespace: "*", "*.svc" (from "*.svc.cluster.local"), "*.local", "*.cluster.local".
func coversServices(w string) bool {
	suffix, ok := strings.CutPrefix(w, "*")
	return ok && (suffix == "" || suffix == ".svc" || strings.HasSuffix(suffix, ".local"))
}

// localCommand takes the mesh for a command on this machine that may change the cluster
// (localChange): it gets the run's kubeconfig, and no namespace guard sees what it does.
func (f *footprint) localCommand(s *dsl.Step, argv []string, stdin string) {
	static := make([]string, len(argv))
	for i, a := range argv {
		static[i] = f.static(a)
	}
	if what, ok := localChange(static, f.static(stdin), f.scriptFile); ok {
		f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s runs %q on this machine, which may change the cluster where no namespace guard sees it (a command labrun does not know to only read)", who(s), what), Pos: s.FieldPos("argv")})
	}
}

// localFiles takes the files on this machine a command writes (and, shared, those it reads),
// as localFiles finds them; a relative path is in dir, where the command runs.
func (f *footprint) localFiles(s *dsl.Step, argv []string, stdin string, env map[string]string, dir string) {
	// $${ is a literal ${ the command gets (a shell's ${OUT}).
	unescape := func(s string) string { return strings.ReplaceAll(f.static(s), "$${", "${") }
	static := make([]string, len(argv))
	for i, a := range argv {
		static[i] = unescape(a)
	}
	vars := map[string]string{}
	for k, v := range env {
		vars[k] = unescape(v)
	}
	writes, reads, unseen := localFiles(static, unescape(stdin), vars, f.scriptFile)
	for _, u := range unseen {
		if f.kube {
			break // on kube a command not known to only read holds the mesh: it runs alone
		}
		if what := who(s) + " " + u; !slices.Contains(f.unseen, what) {
			f.unseen = append(f.unseen, what)
		}
	}
	for _, group := range []struct {
		files  []string
		verb   string
		shared bool
	}{{writes, "writes", false}, {reads, "reads", true}} {
		for _, file := range group.files {
			if dsl.HasInterpolation(file) {
				continue
			}
			abs := file
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(dir, abs)
			}
			f.take(Resource{Key: "file " + filepath.Clean(abs), Shared: group.shared, Why: fmt.Sprintf("%s %s %s on this machine", who(s), group.verb, file), Pos: s.FieldPos("argv")})
		}
	}
}

// loopback says whether host is this machine (localhost, 127.0.0.0/8, ::1).
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// defaultPorts are the ports well-known servers bind when their arguments name none.
var defaultPorts = []struct {
	argv  []string // the command's first words
	ports []string
}{
	{[]string{"fortio", "server"}, []string{"8080", "8079", "8081"}},
	{[]string{"python3", "-m", "http.server"}, []string{"8000"}},
	{[]string{"python", "-m", "http.server"}, []string{"8000"}},
}

// hostHeaderIn finds a Host header in a command's argument (-H "Host: x", -H Host:x).
var hostHeaderIn = regexp.MustCompile(`(?i)(?:^|[\s'"])host:\s*([a-z0-9*][a-z0-9.*-]*)`)

// ipIn finds IPv4 addresses in a command's argument (outside URLs).
var ipIn = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)

// urlIn finds the http(s) URLs in a command's argument ("sh -c 'curl http://x/'").
var urlIn = regexp.MustCompile(`https?://[^\s'"\\]+`)

// url takes what a URL a step calls depends on: on kube its host, on the local target its
// address (probe p25 #07: a load of a fixed local address that another run's backend serves
// measures that backend, and passes only beside it).
func (f *footprint) url(s *dsl.Step, target, raw, ns, field string) {
	raw = f.static(raw)
	if target == "kube" {
		f.calls(s, raw, f.static(ns), field)
		// probe p30 fresh: localhost on kube is this machine's port (a kubectl
		// port-forward another run's process holds).
		if host, port, scheme, ok := hostOf(raw); !ok || !loopback(host) {
			return
		} else if port == "" {
			raw = net.JoinHostPort(host, map[string]string{"http": "80", "https": "443"}[scheme])
		} else {
			raw = net.JoinHostPort(host, port)
		}
		f.use(raw, fmt.Sprintf("%s calls %s", who(s), raw), s.FieldPos(field))
		return
	}
	host, port, scheme, ok := hostOf(raw)
	if !ok {
		return
	}
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	f.use(net.JoinHostPort(host, port), fmt.Sprintf("%s calls %s", who(s), net.JoinHostPort(host, port)), s.FieldPos(field))
}

// hostOf is the host and port of a URL, and its scheme; a ${...} in it stays as written
// (probe p25 #21: Go's URL parser refuses the "{" of http://backend.lab.svc.${target.clusterDomain}/,
// so the call held nothing).
func hostOf(raw string) (host, port, scheme string, ok bool) {
	var subs []string
	mark := func(i int) string { return strconv.Itoa(900000000 + i) } // a port or a label alike
	masked := templateRef.ReplaceAllStringFunc(raw, func(m string) string {
		subs = append(subs, m)
		return mark(len(subs) - 1)
	})
	u, err := url.Parse(masked)
	if err != nil || u.Hostname() == "" {
		return "", "", "", false
	}
	host, port = u.Hostname(), u.Port()
	for i := len(subs) - 1; i >= 0; i-- {
		host = strings.ReplaceAll(host, mark(i), subs[i])
		port = strings.ReplaceAll(port, mark(i), subs[i])
	}
	return host, port, u.Scheme, true
}

var templateRef = regexp.MustCompile(`\$\{[^}]*\}`)

// calls takes the host a step sends requests to (Shared: the run depends on its
// configuration): probe p25 #04, a run calling api.example.com beside one whose VirtualService
// aborted every request to it. A host of the run's own namespaces, an IP address, or one
// known only when the step runs is nothing another run configures (as far as can be known).
func (f *footprint) calls(s *dsl.Step, rawURL, ns, field string) {
	h, port, _, ok := hostOf(rawURL)
	if !ok {
		return
	}
	if _, err := netip.ParseAddr(h); err == nil || strings.EqualFold(h, "localhost") {
		// probe p30 #2: an IP (a ClusterIP, a pod's, a node's with a NodePort, a
		// port-forward's localhost) may be any Service's or pod's, of any namespace: it
		// depends on every host's configuration and every fixed namespace.
		why := fmt.Sprintf("%s calls %s, which may be any Service or pod of the cluster", who(s), net.JoinHostPort(h, port))
		f.take(Resource{Key: "host *", Shared: true, Why: why, Pos: s.FieldPos(field)})
		f.take(Resource{Key: "namespace *", Shared: true, Why: why, Pos: s.FieldPos(field)})
		if n, err := strconv.Atoi(port); err == nil && n >= 30000 && n <= 32767 {
			f.take(Resource{Key: "nodePort " + port, Shared: true, Why: fmt.Sprintf("%s calls NodePort %s", who(s), port), Pos: s.FieldPos(field)})
		}
		return
	}
	if !strings.Contains(h, "${") {
		h = strings.ToLower(h) // a name is case-insensitive; Istio's hosts are written in lower case
	}
	fq, own := f.qualify(h, ns, "load")
	if own || dsl.HasInterpolation(fq) {
		return
	}
	f.take(Resource{Key: "host " + fq, Shared: true, Why: fmt.Sprintf("%s calls %s", who(s), h), Pos: s.FieldPos(field)})
	if len(splitHost(h)) == 2 {
		// "backend.lab" is a Service of lab, or an external name ("example.com"): the
		// resolver tries both.
		f.take(Resource{Key: "host " + h, Shared: true, Why: fmt.Sprintf("%s calls %s", who(s), h), Pos: s.FieldPos(field)})
	}
}

// exportedLocally reports an exportTo of "." alone, or of other namespaces that are not "*":
// the object is not seen mesh-wide.
func exportedLocally(to []string) bool {
	return len(to) > 0 && !slices.Contains(to, "*")
}

// clusterScoped are the cluster-scoped kinds a scenario may apply (with clusterScoped: true).
var clusterScoped = map[string]bool{
	"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"PriorityClass": true, "StorageClass": true, "PersistentVolume": true, "IngressClass": true,
	"GatewayClass": true, "RuntimeClass": true, "Node": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true, "APIService": true,
}

// admission are the cluster-scoped kinds that change or refuse other objects as they are
// written, in every namespace (unless selectors say otherwise, which are not read here).
var admission = map[string]bool{
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
}

// meshCRD says whether a CustomResourceDefinition (named plural.group) defines a kind of
// Istio's or Gateway API's, which the mesh's runs apply and istiod reads.
func meshCRD(name string) bool {
	_, group, _ := strings.Cut(name, ".")
	return group == "istio.io" || strings.HasSuffix(group, ".istio.io") || group == "gateway.networking.k8s.io" || strings.HasSuffix(group, ".gateway.networking.k8s.io")
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	if s, ok := v.([]string); ok {
		out = append(out, s...)
	}
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// file reads the objects of a file an apply or delete step names. probe p25 #12: a file that
// cannot be read before the run (its path a ${...} known only then, or written by an earlier
// step) took nothing, though it may hold anything, a VirtualService for every host included:
// on kube it holds the mesh, so that the run runs beside no other.
func (f *footprint) file(s *dsl.Step, field, file, target string) []schema.Object {
	objs, err := readObjectsErr(f.sc.Dir, f.static(file))
	if err != nil && target == "kube" {
		f.take(Resource{Key: "mesh", Why: fmt.Sprintf("%s %s, whose objects cannot be known before the run (%v)", who(s), file, err), Pos: s.FieldPos(field)})
	}
	return objs
}

// readObjectsErr reads the objects of a YAML file an apply or delete step names, as far as
// they can be read before the run, and says why a file could not be (a path that is a ${...}
// template, a file an earlier step writes). ${...} in the objects stay as written.
func readObjectsErr(dir, file string) ([]schema.Object, error) {
	if strings.Contains(file, "${") {
		return nil, errors.New("its path is known only when the step runs")
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		return nil, err
	}
	objs, err := dsl.YAMLObjects(file, data)
	out := make([]schema.Object, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out, err
}

// splitHost splits a host name at its dots, except those inside a ${...}.
func splitHost(h string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(h); i++ {
		switch {
		case strings.HasPrefix(h[i:], "${"):
			depth++
			i++
		case h[i] == '}' && depth > 0:
			depth--
		case h[i] == '.' && depth == 0:
			parts = append(parts, h[start:i])
			start = i + 1
		}
	}
	return append(parts, h[start:])
}

// who names step s in a footprint's reasons: its kind and name ("load f"), or, unnamed, its
// kind and where it is in the scenario ("load at steps.2"), not its kind twice ("load load").
func who(s *dsl.Step) string {
	switch {
	case s.Name != "":
		return s.Kind + " " + s.Name
	case s.Path != "":
		return s.Kind + " at " + s.Path
	}
	return s.Kind
}
