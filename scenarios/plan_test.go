package scenarios_test

// These tests load the lab scenarios (this directory and the kit in ../scenarios.cue) the way
// `labrun vet` does, pin every scenario's plan in testdata/plans/<scenario>.txt, check the
// seeds' timing protocols on the plans, and check the traps the kits must keep out. They talk
// to nothing: no cluster, no network.
//
// LABRUN_UPDATE=1 go test ./scenarios/ rewrites the plan goldens.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// load loads every scenario of the package once per test binary.
var loaded struct {
	res *dsl.Result
	err error
}

func scenarios(t *testing.T) []*dsl.Scenario {
	t.Helper()
	if loaded.res == nil && loaded.err == nil {
		loaded.res, loaded.err = dsl.Load([]string{"."}, dsl.Options{})
		if loaded.err == nil && loaded.res == nil {
			loaded.err = fmt.Errorf("no result")
		}
	}
	if loaded.err != nil {
		t.Fatalf("the scenarios do not load (labrun vet scenarios/ would say the same):\n%v", loaded.err)
	}
	return loaded.res.Scenarios
}

func byName(t *testing.T) map[string]*dsl.Scenario {
	out := map[string]*dsl.Scenario{}
	for _, sc := range scenarios(t) {
		out[sc.Name] = sc
	}
	return out
}

// wantScenarios is every experiment of shared/SCENARIOS.md plus the config claims of issue 6.
var wantScenarios = []string{
	// Kit A
	"s1", "s2", "s3", "s4", "s5", "s6", "s7_full", "s7c", "s7b", "s7_nodr", "s7_lbonly",
	// Kit B
	"mode1_strict", "mode1_logical", "mode2", "mode3", "a1", "a2_strict", "a2_logical",
	"b", "d1", "d2", "d3", "f0",
	// Kit C
	"c_stale", "c_retry",
	// config claims
	"cfg_resolution_strict", "cfg_resolution_logical", "cfg_portlevel", "cfg_retry", "cfg_passthrough",
}

func TestEveryExperimentIsAScenario(t *testing.T) {
	have := byName(t)
	for _, n := range wantScenarios {
		sc := have[n]
		if sc == nil {
			t.Errorf("no scenario %s", n)
			continue
		}
		if sc.Target != "kube" {
			t.Errorf("%s: target %q, want kube", n, sc.Target)
		}
		if strings.TrimSpace(sc.Doc) == "" {
			t.Errorf("%s: no doc stating the claim", n)
		}
		if len(sc.Expect) == 0 {
			t.Errorf("%s: no expectations", n)
		}
		if len(sc.Cleanup) == 0 {
			t.Errorf("%s: no cleanup", n)
		}
	}
	for n := range have {
		if !slices.Contains(wantScenarios, n) {
			t.Errorf("scenario %s is not in wantScenarios: add it (and its golden)", n)
		}
	}
}

// TestPlanGoldens pins every scenario's timeline and expectations.
func TestPlanGoldens(t *testing.T) {
	update := os.Getenv("LABRUN_UPDATE") == "1"
	dir := filepath.Join("testdata", "plans")
	seen := map[string]bool{}
	for _, sc := range scenarios(t) {
		got := renderPlan(sc)
		file := filepath.Join(dir, sc.Name+".txt")
		seen[filepath.Base(file)] = true
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v (run with LABRUN_UPDATE=1 to create it)", sc.Name, err)
			continue
		}
		if string(want) != got {
			t.Errorf("%s: plan differs from %s (LABRUN_UPDATE=1 rewrites it):\n%s", sc.Name, file, diff(string(want), got))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !seen[e.Name()] {
			if update {
				_ = os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("%s: golden of a scenario that no longer exists", e.Name())
		}
	}
}

// renderPlan prints a plan compactly: no source positions (they move with every edit), the
// timeline as `labrun plan` computes it, then the expectations.
func renderPlan(sc *dsl.Scenario) string {
	pl := dsl.PlanOf(sc)
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s (target %s)\n", pl.Scenario, pl.Target)
	fmt.Fprintf(&b, "doc: %s\n", pl.Doc)
	fmt.Fprintf(&b, "namespaces: %s\n", strings.Join(sc.Namespaces, ", "))
	if len(sc.Tags) > 0 {
		fmt.Fprintf(&b, "tags: %s\n", strings.Join(sc.Tags, ", "))
	}
	if len(sc.Vars) > 0 {
		var vs []string
		for k, v := range sc.Vars {
			vs = append(vs, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(vs)
		fmt.Fprintf(&b, "vars: %s\n", strings.Join(vs, " "))
	}
	if sc.Timeout > 0 {
		fmt.Fprintf(&b, "timeout: %s, cleanup %s\n", sc.Timeout, sc.CleanupTimeout)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTART\tIN BLOCK\tSTEP\tKIND\tTIMEOUT\tNOTES")
	for _, e := range pl.Entries {
		label := e.Path
		if e.Name != "" {
			label = e.Name
		}
		label = strings.Repeat("  ", e.Depth) + label
		timeout := "-"
		if e.Timeout > 0 {
			timeout = e.Timeout.String()
		}
		var notes []string
		if sum := summary(sc, e); sum != "" {
			notes = append(notes, sum)
		}
		if e.Duration != nil {
			notes = append(notes, "lasts "+e.Duration.String())
		}
		if e.Every > 0 {
			notes = append(notes, fmt.Sprintf("every %s while %s runs", e.Every, e.While))
		}
		if e.Background {
			notes = append(notes, "background, joined by "+or(e.JoinedBy, "end of "+string(e.Phase)))
		}
		if e.MaxRounds > 0 {
			notes = append(notes, fmt.Sprintf("at most %d rounds", e.MaxRounds))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Phase, e.Start, e.InBlock, label, e.Kind, timeout, strings.Join(notes, "; "))
	}
	tw.Flush()
	fmt.Fprintf(&b, "then: %s\n", pl.AutoCleanup)
	b.WriteString("expect:\n")
	for i, e := range sc.Expect {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, e.Src)
	}
	return b.String()
}

// summary is the plan's summary of a step, except that a shell script passed to bash -c is
// shown by its first line: the arguments after it (durations, URLs) are what differ.
func summary(sc *dsl.Scenario, e dsl.Entry) string {
	var st *dsl.Step
	for _, s := range steps(sc) {
		if s.Path == e.Path && s.Phase == e.Phase {
			st = s
		}
	}
	if st != nil {
		if x, ok := st.Params.(*schema.Exec); ok && len(x.Argv) > 2 && x.Argv[0] == "bash" && x.Argv[1] == "-c" {
			script := strings.TrimSpace(x.Argv[2])
			first, _, more := strings.Cut(script, "\n")
			if more {
				first += " …"
			}
			return fmt.Sprintf("bash -c '%s' %s", first, strings.Join(x.Argv[3:], " "))
		}
	}
	return strings.ReplaceAll(e.Summary, "\n", "⏎")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want: %s\n  got:  %s\n", i+1, a, c)
		}
	}
	return b.String()
}

// at is a planned offset inside the enclosing block.
type at struct {
	step string
	in   time.Duration
}

// TestTimelines checks the seeds' timing protocols on the plans: the offsets of the steps that
// the seeds time, relative to the block they start in (the curl or load starts at +0).
func TestTimelines(t *testing.T) {
	s := func(d int) time.Duration { return time.Duration(d) * time.Second }
	a2 := []at{{"slow", 0}, {"flip", s(5)}, {"mid1", s(17)}, {"mid2", s(35)}}
	protocols := map[string][]at{
		// a2: flip at +5 s, MID1 = flip+12 s, MID2 = flip+30 s (AFTER: see below).
		"a2_strict": a2, "a2_logical": a2, "d2": a2, "f0": a2,
		// a1: /slow and the flip 5 s later in one block, twice.
		"a1": {{"slow1", 0}, {"flip1", s(5)}, {"slow2", 0}, {"flip2", s(5)}},
		// mode1: load and curl loop together; 3a before the flip, 3b 40 s after it.
		"mode1_strict":  {{"warm", 0}, {"who", 0}, {"before_flip", s(8)}, {"flip", s(10)}, {"after_flip", s(50)}},
		"mode1_logical": {{"warm", 0}, {"who", 0}, {"before_flip", s(8)}, {"flip", s(10)}, {"after_flip", s(50)}},
		// mode3: flip, then kill the pinned backend 20 s later (19:53:45 → 19:54:05).
		"mode3": {{"warm", 0}, {"who", 0}, {"before", s(3)}, {"flip", s(5)}, {"kill_a", s(25)}, {"after", s(45)}},
		// mode2: flip to A+B, then kill A.
		"mode2": {{"warm", 0}, {"who", 0}, {"flip_both", s(5)}, {"before", s(20)}, {"kill_a", s(25)}, {"after", s(50)}},
		// Kit A: the load, and the mid-load gauges sampled while it runs.
		"s1": {{"fortio", 0}, {"mid", 0}},
		"s2": {{"fortio", 0}, {"mid", 0}},
	}
	scs := byName(t)
	for name, want := range protocols {
		sc := scs[name]
		if sc == nil {
			t.Errorf("no scenario %s", name)
			continue
		}
		pl := dsl.PlanOf(sc)
		for _, w := range want {
			e := entry(pl, w.step)
			if e == nil {
				t.Errorf("%s: no step %s in the plan", name, w.step)
				continue
			}
			if e.InBlock.D != w.in || !e.InBlock.Exact {
				t.Errorf("%s: %s starts at %s in its block, want +%s", name, w.step, e.InBlock, w.in)
			}
		}
	}
	// AFTER = completion + 3 s: the step before "after" is a 3 s sleep that follows the block.
	for _, name := range []string{"a2_strict", "a2_logical", "d2", "f0"} {
		pl := dsl.PlanOf(scs[name])
		i := slices.IndexFunc(pl.Entries, func(e dsl.Entry) bool { return e.Name == "after" })
		if i < 1 || pl.Entries[i-1].Kind != "sleep" || pl.Entries[i-1].Duration == nil || *pl.Entries[i-1].Duration != 3*time.Second {
			t.Errorf("%s: AFTER is not taken 3 s after the block ends", name)
		}
	}
	// s4: one request, then 5 s idle, then the snapshot.
	pl := dsl.PlanOf(scs["s4"])
	i := slices.IndexFunc(pl.Entries, func(e dsl.Entry) bool { return e.Name == "after" })
	if i < 1 || pl.Entries[i-1].Kind != "sleep" || *pl.Entries[i-1].Duration != 5*time.Second {
		t.Errorf("s4: after is not preceded by 5 s of idle")
	}
	// Samplers sample the load.
	for _, name := range []string{"s1", "s2"} {
		e := entry(dsl.PlanOf(scs[name]), "mid")
		if e == nil || e.While != "fortio" || e.Every != 500*time.Millisecond {
			t.Errorf("%s: mid is not sampled every 500ms while fortio runs", name)
		}
	}
}

func entry(pl *dsl.Plan, name string) *dsl.Entry {
	for i := range pl.Entries {
		if pl.Entries[i].Name == name {
			return &pl.Entries[i]
		}
	}
	return nil
}

// steps returns every step of a scenario, setup and cleanup included.
func steps(sc *dsl.Scenario) []*dsl.Step {
	var out []*dsl.Step
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) { out = append(out, s) })
	}
	return out
}

// exprs returns every expression of a scenario: expectations, asserts, waits, repeats.
func exprs(sc *dsl.Scenario) []*dsl.Expr {
	out := append([]*dsl.Expr{}, sc.Expect...)
	for _, s := range steps(sc) {
		if s.Expr != nil {
			out = append(out, s.Expr)
		}
	}
	return out
}

// objects returns every object the scenario applies.
func objects(sc *dsl.Scenario) []schema.Object {
	var out []schema.Object
	for _, s := range steps(sc) {
		if a, ok := s.Params.(*schema.Apply); ok {
			out = append(out, a.Objects...)
		}
	}
	return out
}

func str(o any, path ...string) string {
	s, _ := dig(o, path...).(string)
	return s
}

func dig(o any, path ...string) any {
	for _, p := range path {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[p]
	}
	return o
}

// TestStatsMatcherCoversExpectations: Istio records no cluster stats unless the client pod's
// proxyStatsMatcher includes them, and a stat it filters out looks like "no trigger" (seed 000).
// Every stat an expression reads must match one inclusionRegexp of the pod that the snapshot
// reads.
func TestStatsMatcherCoversExpectations(t *testing.T) {
	for _, sc := range scenarios(t) {
		// inclusion regexps by pod selector "app=<label>"
		matchers := map[string][]*regexp.Regexp{}
		for _, o := range objects(sc) {
			if str(o, "kind") != "Deployment" {
				continue
			}
			ann := str(o, "spec", "template", "metadata", "annotations", "proxy.istio.io/config")
			app := str(o, "spec", "template", "metadata", "labels", "app")
			if ann == "" || app == "" {
				continue
			}
			var pc struct {
				ProxyStatsMatcher struct {
					InclusionRegexps []string `json:"inclusionRegexps"`
				} `json:"proxyStatsMatcher"`
			}
			if err := json.Unmarshal([]byte(ann), &pc); err != nil {
				t.Errorf("%s: deployment with app=%s: proxy.istio.io/config is not JSON: %v", sc.Name, app, err)
				continue
			}
			for _, r := range pc.ProxyStatsMatcher.InclusionRegexps {
				// Envoy matches the whole stat name.
				matchers["app="+app] = append(matchers["app="+app], regexp.MustCompile("^(?:"+r+")$"))
			}
		}
		type source struct{ selector, cluster string }
		snaps := map[string]source{}
		var first string
		for _, s := range steps(sc) {
			p, ok := s.Params.(*schema.Snapshot)
			if !ok || p.Envoy == nil || s.Name == "" {
				continue
			}
			snaps[s.Name] = source{p.Envoy.Selector, p.Cluster}
			if first == "" && s.Every == 0 {
				first = s.Name
			}
		}
		for _, e := range exprs(sc) {
			for _, ref := range e.Refs {
				name := ref.Name
				switch ref.Kind {
				case dsl.RefDelta:
					name = first
				case dsl.RefDeltaPair:
					name = ref.From
				case dsl.RefSeries:
					name, _, _ = strings.Cut(ref.Name, ".")
				}
				src, ok := snaps[name]
				if !ok {
					t.Errorf("%s: %q reads %s of %q, which is no Envoy snapshot", sc.Name, e.Src, ref.Stat, name)
					continue
				}
				ms := matchers[src.selector]
				if len(ms) == 0 {
					t.Errorf("%s: snapshot %s reads pods %s, whose pod template sets no proxyStatsMatcher", sc.Name, name, src.selector)
					continue
				}
				cluster := strings.ReplaceAll(src.cluster, "${target.clusterDomain}", "homelab.local")
				names := []string{"cluster." + cluster + "." + ref.Stat, "cluster." + cluster + ";." + ref.Stat}
				if !slices.ContainsFunc(ms, func(re *regexp.Regexp) bool {
					return re.MatchString(names[0]) || re.MatchString(names[1])
				}) {
					t.Errorf("%s: %q reads %s, which the proxyStatsMatcher of %s filters out", sc.Name, e.Src, names[0], src.selector)
				}
			}
		}
	}
}

var clusterName = regexp.MustCompile(`^outbound\|\d+\|\|(?:[a-z0-9-]+\.[a-z0-9-]+\.svc\.\$\{target\.clusterDomain\}|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.lab\.internal)$`)

// TestClusterNames: exact Envoy cluster names, service names built with the discovered cluster
// domain, never a literal cluster.local anywhere (seed 002 §7).
func TestClusterNames(t *testing.T) {
	for _, sc := range scenarios(t) {
		for _, s := range steps(sc) {
			var cluster string
			switch p := s.Params.(type) {
			case *schema.Snapshot:
				cluster = p.Cluster
			case *schema.Config:
				cluster = p.Cluster
			}
			if cluster != "" && !clusterName.MatchString(cluster) {
				t.Errorf("%s: %s: cluster %q is not an exact outbound cluster name built from the cluster domain", sc.Name, s.Path, cluster)
			}
			b, _ := json.Marshal(s.Params)
			if strings.Contains(string(b), "cluster.local") {
				t.Errorf("%s: %s: a literal cluster.local: use ${target.clusterDomain}", sc.Name, s.Path)
			}
		}
		for _, e := range exprs(sc) {
			if strings.Contains(e.Src, "cluster.local") {
				t.Errorf("%s: %q: a literal cluster.local: use target.clusterDomain", sc.Name, e.Src)
			}
		}
	}
}

// TestPortLevelSettings: a port listed in portLevelSettings inherits nothing from the DR's top
// level (seed 002 §11). The kit refuses such a DR in CUE; this checks what reaches the cluster,
// allowing only the DR labelled as the deliberate trap.
func TestPortLevelSettings(t *testing.T) {
	traps := 0
	for _, sc := range scenarios(t) {
		for _, o := range objects(sc) {
			if str(o, "kind") != "DestinationRule" {
				continue
			}
			tp, _ := dig(o, "spec", "trafficPolicy").(map[string]any)
			pls, _ := tp["portLevelSettings"].([]any)
			if len(pls) == 0 {
				continue
			}
			var shadowed []string
			for _, f := range []string{"connectionPool", "outlierDetection", "loadBalancer", "tls"} {
				if _, ok := tp[f]; ok {
					shadowed = append(shadowed, f)
				}
			}
			if len(shadowed) == 0 {
				continue
			}
			if str(o, "metadata", "labels", "labrun.dev/trap") == "portLevelSettings" {
				traps++
				continue
			}
			t.Errorf("%s: DestinationRule %s: top-level %s ignored on the ports of portLevelSettings", sc.Name, str(o, "metadata", "name"), strings.Join(shadowed, ", "))
		}
	}
	if traps == 0 {
		t.Errorf("no scenario shows the trap on purpose (cfg_portlevel should)")
	}
}

// TestHTTPServicePorts: the backends' Service ports are named http, or Istio builds a TCP
// cluster and ignores every http.* setting (seed 000 pitfalls).
func TestHTTPServicePorts(t *testing.T) {
	for _, sc := range scenarios(t) {
		for _, o := range objects(sc) {
			if str(o, "kind") != "Service" {
				continue
			}
			switch str(o, "metadata", "name") {
			case "backend", "dummy":
			default:
				continue
			}
			ports, _ := dig(o, "spec", "ports").([]any)
			for _, p := range ports {
				if n := str(p, "name"); n != "http" && !strings.HasPrefix(n, "http-") {
					t.Errorf("%s: Service %s: port named %q, want http", sc.Name, str(o, "metadata", "name"), n)
				}
			}
		}
	}
}

// TestKitGuards: the kit refuses the traps at vet time, before anything runs.
func TestKitGuards(t *testing.T) {
	cases := []struct{ name, cue, want string }{
		{
			"top-level outlierDetection next to portLevelSettings",
			`kitB: dr: "probe": spec: {host: "gslb.lab.internal", trafficPolicy: {
				outlierDetection: {consecutiveLocalOriginFailures: 3}
				portLevelSettings: [{port: number: 443, tls: {mode: "SIMPLE"}}]}}`,
			"portLevelSettings trap",
		},
		{
			"top-level connectionPool next to portLevelSettings",
			`kitA: dr: "probe": spec: {host: "x", trafficPolicy: {
				connectionPool: http: maxRequestsPerConnection: 1
				portLevelSettings: [{port: number: 8080}]}}`,
			"portLevelSettings trap",
		},
		{
			"HTTP service port not named http",
			`probe: #HTTPService & {metadata: name: "x", spec: {selector: app: "x", ports: [{name: "tcp", port: 8080}]}}`,
			`expected one of "http", a value matching =~"^http-", got "tcp"`,
		},
		{
			"misspelled connectionPool field",
			`kitA: dr: "probe": spec: {host: "x", trafficPolicy: connectionPool: tcp: maxConnection: 1}`,
			"maxConnection",
		},
	}
	abs, err := filepath.Abs("zz_guard_probe.cue")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "package scenarios\n\n" + c.cue + "\n"
			_, err := dsl.Load([]string{"s1.cue"}, dsl.Options{Overlay: map[string][]byte{abs: []byte(src)}})
			if err == nil {
				t.Fatalf("the kit accepts it")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("refused, but the message does not say %q:\n%v", c.want, err)
			}
		})
	}
}
