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
		if e.Timeout > 0 && !e.TimeoutDefault { // the goldens show the timeouts written
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

// The kit's traps are vet's lints (dsl/lint.go), one implementation for every user: CI's
// `labrun vet --strict scenarios/` keeps the seeds free of them. TestKitTrapsAreLints breaks
// the kit the way each trap is written and wants the lint's warning on every scenario that
// the break would make measure something else, and on no other: the lints catch what the
// kit's former guards of its own caught (an #HTTPService definition, a portLevelSettings rule
// in #DestinationRule, a Go test of the stats matchers), and they replace them.
func TestKitTrapsAreLints(t *testing.T) {
	// Unbroken, no scenario has a warning (cfg_portlevel silences its deliberate trap).
	clean, err := dsl.Load([]string{"."}, dsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range clean.Warnings {
		t.Errorf("the seeds warn: %s", w)
	}
	kitFile, err := filepath.Abs("../scenarios.cue")
	if err != nil {
		t.Fatal(err)
	}
	kit, err := os.ReadFile(kitFile)
	if err != nil {
		t.Fatal(err)
	}
	// readsEnvoyStats are the scenarios whose expectations read stats of an Envoy snapshot.
	readsEnvoyStats := func(sc *dsl.Scenario) bool {
		envoy := map[string]bool{}
		for _, s := range steps(sc) {
			if p, ok := s.Params.(*schema.Snapshot); ok && p.Envoy != nil && s.Name != "" {
				envoy[s.Name] = true
			}
		}
		for _, e := range exprs(sc) {
			for _, r := range e.Refs {
				name := r.Name
				switch r.Kind {
				case dsl.RefDelta:
					name = sc.Snapshots[0].Name
				case dsl.RefDeltaPair:
					name = r.From
				case dsl.RefSeries:
					name, _, _ = strings.Cut(r.Name, ".")
				}
				if r.Stat != "" && envoy[name] {
					return true
				}
			}
		}
		return false
	}
	cases := []struct {
		name string
		// old → new in scenarios.cue (each once), and a file added to the package.
		old, new, extra string
		code            string
		// want are the scenarios that must warn with code; every other one must not.
		want []string
		// wantAll adds every scenario for which it is true.
		wantAll func(*dsl.Scenario) bool
	}{{
		// The former #HTTPService refused this. s6 (the blackhole), s7_nodr and s7_lbonly (no HTTP
		// setting) and c_stale (HBONE connection reuse) read nothing that the port's
		// protocol turns off, so they do not warn.
		name: "the backends' Service ports named tcp",
		old:  `ports: [{name: "http", port: 8080, targetPort: 8080}]`,
		new:  `ports: [{name: "tcp", port: 8080, targetPort: 8080}]`,
		code: dsl.LintTCPPort,
		want: []string{"s1", "s2", "s3", "s4", "s5", "s7_full", "s7c", "s7b", "c_retry"},
	}, {
		name: "the backends' Service ports unnamed",
		old:  `ports: [{name: "http", port: 8080, targetPort: 8080}]`,
		new:  `ports: [{name: "", port: 8080, targetPort: 8080}]`,
		code: dsl.LintTCPPort,
		want: []string{"s1", "s2", "s3", "s4", "s5", "s7_full", "s7c", "s7b", "c_retry"},
	}, {
		// The former #DestinationRule rule refused this: seed 002's DR 44 as first written.
		name: "Kit B: outlierDetection at the top level next to portLevelSettings[443]",
		old: `"gslb-tls-churn-outlier": spec: {host: gslb.host, trafficPolicy: portLevelSettings: [{
			port: number: 443
			tls:              originTLS
			outlierDetection: outlier
			connectionPool: {tcp: connectTimeout: "1s", http: maxRequestsPerConnection: 1}
		}]}`,
		new: `"gslb-tls-churn-outlier": spec: {host: gslb.host, trafficPolicy: {
			outlierDetection: outlier
			portLevelSettings: [{port: number: 443, tls: originTLS, connectionPool: {tcp: connectTimeout: "1s", http: maxRequestsPerConnection: 1}}]
		}}`,
		code: dsl.LintPortLevel,
		want: usersOf(t, "gslb-tls-churn-outlier", dsl.LintPortLevel),
	}, {
		name:  "Kit A: a top-level connectionPool next to a portLevelSettings entry",
		extra: `kitA: dr: "dr-s2": spec: trafficPolicy: portLevelSettings: [{port: number: 8080, loadBalancer: simple: "ROUND_ROBIN"}]`,
		code:  dsl.LintPortLevel,
		want:  []string{"s2"},
	}, {
		// The former TestStatsMatcherCoversExpectations checked this: every scenario that reads an
		// Envoy stat needs its client's proxyStatsMatcher to record it.
		name:    "the clients' proxyStatsMatcher records nothing",
		old:     `proxyStatsMatcher: inclusionRegexps: I`,
		new:     `proxyStatsMatcher: inclusionRegexps: [for r in I if false {r}]`,
		code:    dsl.LintStatsMatcher,
		wantAll: readsEnvoyStats,
	}, {
		name: "Kit A's proxyStatsMatcher without the backend",
		old:  `statsInclusion: [".*backend.*", ".*blackhole.*", ".*circuit_breakers.*"]`,
		new:  `statsInclusion: [".*blackhole.*"]`,
		code: dsl.LintStatsMatcher,
		want: []string{"s1", "s2", "s3", "s4", "s5"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			overlay := map[string][]byte{}
			if c.old != "" {
				if n := strings.Count(string(kit), c.old); n == 0 {
					t.Fatalf("scenarios.cue does not hold %q: update this test", c.old)
				}
				overlay[kitFile] = []byte(strings.ReplaceAll(string(kit), c.old, c.new))
			}
			if c.extra != "" {
				abs, err := filepath.Abs("zz_trap_probe.cue")
				if err != nil {
					t.Fatal(err)
				}
				overlay[abs] = []byte("package scenarios\n\n" + c.extra + "\n")
			}
			res, err := dsl.Load([]string{"."}, dsl.Options{Overlay: overlay})
			if err != nil {
				t.Fatalf("the broken kit does not load: %v", err)
			}
			want := map[string]bool{}
			for _, n := range c.want {
				want[n] = true
			}
			for _, sc := range res.Scenarios {
				if c.wantAll != nil && c.wantAll(sc) {
					want[sc.Name] = true
				}
			}
			if len(want) == 0 {
				t.Fatal("no scenario to warn: the case tests nothing")
			}
			got := map[string]bool{}
			for _, w := range res.Warnings {
				if w.Code == c.code {
					got[w.Scenario] = true
					if !w.Pos.IsValid() || !strings.HasSuffix(w.Pos.File, ".cue") {
						t.Errorf("%s: warning without a position in a .cue file: %s", w.Scenario, w)
					}
				}
			}
			for n := range want {
				if !got[n] {
					t.Errorf("%s: no %s warning", n, c.code)
				}
			}
			for n := range got {
				if !want[n] {
					t.Errorf("%s: an unexpected %s warning", n, c.code)
				}
			}
		})
	}
}

// usersOf are the scenarios that apply the kit's DestinationRule named dr, except those that
// silence the lint code.
func usersOf(t *testing.T, dr, code string) []string {
	var out []string
	for _, sc := range scenarios(t) {
		if _, ignored := sc.LintIgnore[code]; ignored {
			continue
		}
		for _, o := range objects(sc) {
			if str(o, "kind") == "DestinationRule" && str(o, "metadata", "name") == dr {
				out = append(out, sc.Name)
				break
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no scenario applies DestinationRule %s: update this test", dr)
	}
	return out
}

// TestKitRefusesMisspelledFields: the kit's definitions are closed, so a misspelled field is
// a vet error, before anything runs.
func TestKitRefusesMisspelledFields(t *testing.T) {
	abs, err := filepath.Abs("zz_guard_probe.cue")
	if err != nil {
		t.Fatal(err)
	}
	src := "package scenarios\n\n" + `kitA: dr: "probe": spec: {host: "x", trafficPolicy: connectionPool: tcp: maxConnection: 1}` + "\n"
	_, err = dsl.Load([]string{"s1.cue"}, dsl.Options{Overlay: map[string][]byte{abs: []byte(src)}})
	if err == nil {
		t.Fatalf("the kit accepts it")
	}
	if !strings.Contains(err.Error(), "maxConnection") {
		t.Errorf("refused, but the message does not name the field:\n%v", err)
	}
}
