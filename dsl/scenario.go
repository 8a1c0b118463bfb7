// Package dsl loads labrun scenarios: CUE files, CUE packages and Markdown documents with fenced
// CUE blocks. It validates them against the embedded schema, decodes them into typed plan values
// that keep the source position of every step and expression, and compiles every expression and
// every ${...} interpolation once, against an environment that knows which names will exist.
//
// Nothing here talks to a cluster, the network or a terminal.
package dsl

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"labrun.dev/labrun/schema"
)

// Scenario is one validated experiment, ready to plan and run.
type Scenario struct {
	// Name is the scenario's top-level field name, e.g. "s2".
	Name string
	// Pos is where the scenario is declared.
	Pos Pos
	// Dir is the directory of the file that declares the scenario (relative paths in steps
	// resolve against it).
	Dir string

	Doc    string
	Target string
	// Clusters are the clusters a kube scenario reaches (clusters:), in declaration order;
	// the first is the default of steps that name none. Empty: the one cluster of --context.
	Clusters []Cluster
	// Namespaces are the fixed namespaces the scenario may change (namespaces:).
	Namespaces []string
	// Ephemeral are the namespaces made for each run (ephemeralNamespaces:); Generated maps
	// each one's key to its name in one run (set by ForRun; nil in a scenario as loaded).
	Ephemeral []EphemeralNamespace
	Generated map[string]string
	// SystemNamespaces are the system namespaces among Namespaces that the scenario opts in
	// to change (schema.SystemNamespaces; the run also needs --allow-system-namespaces).
	SystemNamespaces []string
	ClusterScoped    bool
	Vars             map[string]any
	// Secrets are the vars whose values are secret: the console, the record and every
	// report show "[secret <name>]" instead (see interp.Redactor).
	Secrets []string
	// SecretSweep is every value the run's matrix sweeps of each secret var, in order: each
	// reads "[secret <name> #<i>]" (set by the matrix; nil outside one).
	SecretSweep map[string][]string
	// Declared is where each var is declared; VarSource says where its value came from
	// ("default" or "command line").
	Declared  map[string]Pos
	VarSource map[string]string
	// unreadVars are the declared vars that nothing in the scenario reads (see varreads.go):
	// a --sweep of one is refused.
	unreadVars map[string]bool
	// judgedOnlyVars are the declared vars that only the expectations (and catch steps)
	// read, with what reads them: a sweep of one is warned of (LintSweepOnlyJudged).
	judgedOnlyVars map[string]string
	// cueVars are the declared vars the scenario's CUE could read (a field computed from
	// one, such as requests: vars.n), and cueVarsKnown says they were found (see varreads.go).
	cueVars      map[string]bool
	cueVarsKnown bool
	Local        *schema.Local
	Setup        []*Step
	Steps        []*Step
	// Catch runs only when the setup or the steps failed (a step failed or errored), before
	// the cleanup: it collects what explains the failure (events, describe, logs).
	Catch   []*Step
	Cleanup []*Step
	Expect  []*Expr
	// expectAt is the place in expect: of each of Expect (a scenario with problems leaves
	// out the expectations that did not compile).
	expectAt       []int
	AllowReset     []string
	Timeout        time.Duration
	CleanupTimeout time.Duration
	// TimeoutPos and CleanupTimeoutPos are where Timeout and CleanupTimeout are written (the
	// run's error names them when they expire).
	TimeoutPos        Pos `json:"-"`
	CleanupTimeoutPos Pos `json:"-"`
	// AddressPos are where the local world's fixed addresses are written, by field
	// ("local.backends.a.address"): a run that cannot listen on one names its line.
	AddressPos map[string]Pos `json:"-"`
	Tags       []string
	// Sweep is the scenario's own sweep: var → values, as the command line writes them.
	Sweep map[string][]string
	// SweepPos are where each of Sweep's values is written, in the same order.
	SweepPos map[string][]Pos `json:"-"`
	// VarKinds is each declared var's type: "int", "number", "string", "bool" ("" for any
	// other), which --var, --sweep and sweep values must have.
	VarKinds map[string]string
	// Plot is what the summary of the scenario's runs draws first (plot:).
	Plot []PlotSpec
	// LintIgnore are the lint codes the scenario silences, with the reason.
	LintIgnore map[string]string
	// Warnings are the lints' findings in this scenario (set by Load; nil under --strict,
	// which makes them errors): its run's record keeps them, so that its report says what
	// the console said when it ran.
	Warnings []*Warning
	// Survivors are the mutants that may survive, by name, with the reason; SurvivorPos is
	// where each name is written.
	Survivors   map[string]string
	SurvivorPos map[string]Pos

	// Snapshots lists the steps whose result is a map of stats (a snapshot not sampled with
	// every) in declaration order.
	Snapshots []*Step
	// Names are what its expressions read, typed as the step kinds declare them.
	ExprNames *Names
	// IstioChecks are the problems of Istio kinds that a load for a run, or vet --server's,
	// leaves to the cluster's CRDs (Options.IstioByCluster): a newer Istio than the one vet
	// knows may serve the field, kind or version.
	IstioChecks []*IstioCheck `json:"-"`
	// names maps a step name to its step.
	names map[string]*Step
	// timeline is the steps' order and nesting (see Unavailable).
	timeline *timeline
	// exprNames are the names expressions see, for the ${...} of files read at run time.
	exprNames *Names
}

// ExpectPath is the CUE path of Expect[i], as its problems name it: e.g. "s.expect.3".
func (s *Scenario) ExpectPath(i int) string {
	if i < len(s.expectAt) {
		i = s.expectAt[i]
	}
	return fmt.Sprintf("%s.expect.%d", s.Name, i)
}

// Step returns the step with this name, or nil.
func (s *Scenario) Step(name string) *Step { return s.names[name] }

// Phase is one of the phases of a scenario.
type Phase string

// The phases, in the order they run.
const (
	PhaseSetup   Phase = "setup"
	PhaseSteps   Phase = "steps"
	PhaseCatch   Phase = "catch"
	PhaseCleanup Phase = "cleanup"
)

// phaseOrder is the order the phases run in.
var phaseOrder = map[Phase]int{PhaseSetup: 0, PhaseSteps: 1, PhaseCatch: 2, PhaseCleanup: 3}

// Phases returns the scenario's phases with their steps, in the order they run (catch only
// when the run failed).
func (s *Scenario) Phases() []struct {
	Phase Phase
	Steps []*Step
} {
	return []struct {
		Phase Phase
		Steps []*Step
	}{{PhaseSetup, s.Setup}, {PhaseSteps, s.Steps}, {PhaseCatch, s.Catch}, {PhaseCleanup, s.Cleanup}}
}

// Step is one step of a scenario.
type Step struct {
	// Pos is where the step is written.
	Pos Pos
	// Path is the step's CUE path inside the scenario, e.g. "steps.2.parallel.1".
	Path  string
	Phase Phase

	Name string
	// Cluster is the cluster the step names (cluster:), or its block's; "" for the scenario's
	// default (see Scenario.ClusterOf).
	Cluster string
	// Shown is what progress and JUnit call the step: its name; or, inside a named block, the
	// block's name and the step's place in it ("create.1" for the second step of the block
	// named create, "create.1.0" deeper); else its path.
	Shown string
	Doc   string
	// Kind is the step kind: a key of schema.Kinds.
	Kind string

	// At is the offset from the start of the enclosing parallel block (HasAt says it was given).
	At    time.Duration
	HasAt bool
	// Timeout bounds the step (0: none of its own).
	Timeout    time.Duration
	Background bool
	MayFail    bool
	// ExpectFail inverts the step: it passes when it fails, and, when ExpectFailRE is set,
	// only with an error that matches it (ExpectFailSrc is the pattern as written).
	ExpectFail    bool
	ExpectFailRE  *regexp.Regexp
	ExpectFailSrc string
	// Every and While make the step a sampler: it repeats every Every while the step named
	// While runs.
	Every time.Duration
	While string

	// Params is the kind's parameters as decoded at load time; steps whose strings hold ${...}
	// are decoded again after interpolation when they start (see Resolve).
	Params schema.Params
	// raw is the kind's value as JSON-like data, with the compiled templates of its strings.
	raw       any
	templates map[string]*Template

	// FileTemplates: a file the step reads (apply.files, wait.matchFiles, …) holds ${...},
	// filled when the step starts (Scenario.ExpandFile).
	FileTemplates bool
	// Children are the steps of parallel, sequence and repeat.
	Children []*Step
	// Await names the background steps an await step joins.
	Await []string
	// Expr is the expression of assert, wait.until and repeat.until.
	Expr *Expr
	// fieldPos finds where a field of the kind's value is written (see FieldPos).
	fieldPos func(path string) Pos
}

// FieldPos is where the field at path inside the step's kind value is written
// ("objects.0.spec.trafficPolicy"), or where the closest written parent is; the step's own
// position when nothing of the path is written.
func (s *Step) FieldPos(path string) Pos {
	if s.fieldPos != nil {
		if p := s.fieldPos(path); p.IsValid() {
			return p
		}
	}
	return s.Pos
}

// Label is a short human description: the name, or the kind and its main parameter.
func (s *Step) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Kind
}

// Walk calls fn for every step, depth first, in declaration order.
func Walk(steps []*Step, fn func(*Step)) {
	for _, s := range steps {
		fn(s)
		Walk(s.Children, fn)
	}
}

// Names returns the names of the scenario's named steps.
func (s *Scenario) Names() []string {
	out := make([]string, 0, len(s.names))
	for n := range s.names {
		out = append(out, n)
	}
	return out
}

// Cluster is one of a scenario's clusters: its name and its kubeconfig context ("" when the
// command line gives it, or, for the first, the run's --context or current context).
type Cluster struct {
	Name    string `json:"name"`
	Context string `json:"context,omitempty"`
	Pos     Pos    `json:"-"`
}

// DefaultCluster is the cluster of steps that name none: the first declared ("" when the
// scenario declares none).
func (s *Scenario) DefaultCluster() string {
	if len(s.Clusters) == 0 {
		return ""
	}
	return s.Clusters[0].Name
}

// ClusterOf is the cluster a step runs on: its own (or its block's), else the default; ""
// in a scenario that declares no clusters.
func (s *Scenario) ClusterOf(st *Step) string {
	if st != nil && st.Cluster != "" {
		return st.Cluster
	}
	return s.DefaultCluster()
}

// ClusterNames are the names of the scenario's clusters, in declaration order.
func (s *Scenario) ClusterNames() []string {
	out := make([]string, len(s.Clusters))
	for i, c := range s.Clusters {
		out[i] = c.Name
	}
	return out
}

// EphemeralNamespace is a namespace made for each run, under the name <Key>-<run id>.
type EphemeralNamespace struct {
	Key         string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Pos         Pos               `json:"-"`
}

// NamespaceRef is how an expression or a ${...} reads the name of the ephemeral namespace key:
// ns.key, or ns["key"] when the key holds a dash.
func NamespaceRef(key string) string {
	if strings.Contains(key, "-") {
		return `ns["` + key + `"]`
	}
	return "ns." + key
}

// Allowed are the namespaces the scenario's mutating steps may change: its ephemeral ones
// (their names in this run, or before a run "${ns.key}", which no real namespace can be
// called), then its fixed ones.
func (s *Scenario) Allowed() []string {
	out := make([]string, 0, len(s.Ephemeral)+len(s.Namespaces))
	for _, e := range s.Ephemeral {
		if n := s.Generated[e.Key]; n != "" {
			out = append(out, n)
		} else {
			out = append(out, "${"+NamespaceRef(e.Key)+"}")
		}
	}
	return append(out, s.Namespaces...)
}

// DefaultNamespace is the namespace of steps and objects that name none: the first ephemeral
// namespace, else the first fixed one ("" when the scenario declares none).
func (s *Scenario) DefaultNamespace() string {
	if a := s.Allowed(); len(a) > 0 {
		return a[0]
	}
	return ""
}

// EphemeralName is the name of the ephemeral namespace key in the run runID.
func EphemeralName(key, runID string) string { return key + "-" + runID }

// ForRun returns a copy of the scenario for the run runID, with its ephemeral namespaces
// named; the scenario itself is left as it is (the runs of a --count share it).
func (s *Scenario) ForRun(runID string) *Scenario {
	if len(s.Ephemeral) == 0 {
		return s
	}
	c := *s
	c.Generated = make(map[string]string, len(s.Ephemeral))
	for _, e := range s.Ephemeral {
		c.Generated[e.Key] = EphemeralName(e.Key, runID)
	}
	return &c
}
