package dsl

import (
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/schema"
)

// Plan is a scenario's timeline, computed before anything runs.
type Plan struct {
	Scenario string `json:"scenario"`
	Pos      Pos    `json:"pos"`
	Doc      string `json:"doc,omitempty"`
	Target   string `json:"target"`
	// clusterOf is the scenario's Scenario.ClusterOf.
	clusterOf func(*Step) string
	// noSummaries leaves Entry.Summary empty: a plan made for its times only (planTimes).
	noSummaries bool
	Entries     []Entry `json:"entries"`
	// AutoCleanup says what the run removes by itself after the cleanup phase.
	AutoCleanup string `json:"autoCleanup"`
	// Objects are the objects each apply step applies (plan --objects), in step order.
	Objects []PlanObject `json:"objects,omitempty"`
	// Vars are the values in force, sorted by name.
	Vars []PlanVar `json:"vars,omitempty"`
	// Matrix and Units are the runs a sweep or --count makes (absent for a single run); the
	// timeline is the first unit's.
	Matrix *Matrix    `json:"matrix,omitempty"`
	Units  []PlanUnit `json:"units,omitempty"`

	// ends are the planned ends of the named steps planned so far (lower bounds unless exact).
	ends map[string]Offset
}

// PlanVar is a var's value in force and where it came from.
type PlanVar struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
	// From is "default" (the scenario's declaration) or "command line" (--var).
	From string `json:"from"`
}

// Offset is a planned start time. Exact offsets are known to the millisecond; an inexact one is
// a lower bound because a step of unknown duration (an apply, a load of N requests) comes first.
type Offset struct {
	D     time.Duration `json:"ns"`
	Exact bool          `json:"exact"`
}

func (o Offset) String() string {
	if o.Exact {
		return "+" + fmtDur(o.D)
	}
	return "≥" + fmtDur(o.D)
}

func (o Offset) add(d time.Duration, exact bool) Offset {
	return Offset{D: o.D + d, Exact: o.Exact && exact}
}

func fmtDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// Entry is one step on the timeline.
type Entry struct {
	Phase Phase  `json:"phase"`
	Path  string `json:"path"`
	Pos   Pos    `json:"pos"`
	Depth int    `json:"depth"`
	Name  string `json:"name,omitempty"`
	Kind  string `json:"kind"`
	// Cluster is the cluster the step runs on, in a scenario that declares clusters.
	Cluster string `json:"cluster,omitempty"`
	// Summary is the step's main parameters in a few words.
	Summary string `json:"summary"`
	// Start is the planned start from the start of the phase (steps start after setup ends).
	Start Offset `json:"start"`
	// InBlock is the offset from the start of the enclosing block.
	InBlock Offset `json:"inBlock"`
	// Duration is the planned duration when it is known exactly (a sleep, a block of sleeps).
	Duration *time.Duration `json:"durationNs,omitempty"`
	// MinDuration is a lower bound of the duration (a load of a duration: fortio's start-up
	// adds a little; a block holding one).
	MinDuration *time.Duration `json:"minDurationNs,omitempty"`
	// Timeout bounds the step: its own timeout, or (TimeoutDefault) its kind's default.
	Timeout        time.Duration `json:"timeoutNs,omitempty"`
	TimeoutDefault bool          `json:"timeoutDefault,omitempty"`
	// WaitsOn names what the step waits for: awaited steps, or the step it samples while.
	WaitsOn []string `json:"waitsOn,omitempty"`
	// Background: the step runs on until JoinedBy (an await step's path) or the end of its phase.
	Background bool   `json:"background,omitempty"`
	JoinedBy   string `json:"joinedBy,omitempty"`
	// Every is the sampling interval of a sampler, and While the step it samples during.
	Every time.Duration `json:"everyNs,omitempty"`
	While string        `json:"while,omitempty"`
	// MaxRounds is repeat's limit.
	MaxRounds int `json:"maxRounds,omitempty"`
}

// PlanOf computes the timeline of a scenario.
func PlanOf(sc *Scenario) *Plan {
	return planOf(sc, true)
}

// planTimes is PlanOf without the steps' summaries, for what reads only the plan's times
// (the timeline's checks, a unit's span): a summary is a string built from each step's
// parameters (fmt and strings.Fields), which vet made for every step and never showed.
func planTimes(sc *Scenario) *Plan {
	return planOf(sc, false)
}

func planOf(sc *Scenario, summaries bool) *Plan {
	p := &Plan{Scenario: sc.Name, Pos: sc.Pos, Doc: sc.Doc, Target: sc.Target, clusterOf: sc.ClusterOf, noSummaries: !summaries}
	for _, name := range sortedKeys(sc.Vars) {
		p.Vars = append(p.Vars, PlanVar{Name: name, Value: sc.Vars[name], From: or(sc.VarSource[name], "default")})
	}
	joined := map[string]string{}
	steps := 0
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
		steps++
		for _, a := range s.Await {
			if _, ok := joined[a]; !ok {
				joined[a] = s.Label()
			}
		}
	})
	if steps > 0 { // no step: Entries stays nil, as a plan's JSON has it
		p.Entries = make([]Entry, 0, steps) // an entry per step: grown by appends, a third of a plan's allocation
	}
	for _, ph := range sc.Phases() {
		_, _ = p.sequence(ph.Steps, Offset{Exact: true}, 0, joined)
	}
	switch sc.Target {
	case "kube":
		p.AutoCleanup = "objects the run created are deleted in reverse order of creation"
	default:
		p.AutoCleanup = "local processes are stopped and local backends, blackholes and DNS are shut down"
	}
	return p
}

// sequence plans steps one after another from start; it returns the planned end, and whether
// the sequence's own duration is known exactly (offsets inside a block that starts at a lower
// bound are still exact from the block's start).
func (p *Plan) sequence(steps []*Step, start Offset, depth int, joined map[string]string) (Offset, bool) {
	cur, rel := start, Offset{Exact: true}
	for _, s := range steps {
		end, exact := p.step(s, cur, rel, depth, joined)
		if !s.Background && s.Every == 0 {
			rel = rel.add(end.D-cur.D, exact)
			cur = end
		}
	}
	return cur, rel.Exact
}

// step plans one step starting at start (inBlock from its block's start) and returns its end
// and whether its duration is known exactly.
func (p *Plan) step(s *Step, start, inBlock Offset, depth int, joined map[string]string) (Offset, bool) {
	e := Entry{
		Phase: s.Phase, Path: s.Path, Pos: s.Pos, Depth: depth, Name: s.Name, Kind: s.Kind,
		Start: start, InBlock: inBlock, Timeout: s.Timeout,
		Background: s.Background, Every: s.Every, While: s.While, WaitsOn: s.Await,
	}
	if !p.noSummaries {
		e.Summary = Summary(s)
	}
	if p.clusterOf != nil {
		e.Cluster = p.clusterOf(s)
	}
	if s.Timeout == 0 && s.Params != nil {
		e.Timeout = s.Params.Plan().Timeout.Default()
		e.TimeoutDefault = e.Timeout > 0
	}
	if s.Background {
		e.JoinedBy = joined[s.Name]
	}
	if s.While != "" {
		e.WaitsOn = []string{s.While}
	}
	if r, ok := s.Params.(*schema.Repeat); ok {
		e.MaxRounds = r.Max
	}
	d, exact := knownDuration(s)
	idx := len(p.Entries)
	p.Entries = append(p.Entries, e)
	switch s.Kind {
	case "parallel":
		// The block lasts as long as its longest child; one child of unknown duration makes
		// that a lower bound, whatever the order of the children.
		var longest time.Duration
		allExact := true
		for _, c := range s.Children {
			cs := start.add(c.At, true)
			ce, cExact := p.step(c, cs, Offset{D: c.At, Exact: true}, depth+1, joined)
			if c.Background || c.Every > 0 {
				continue
			}
			longest = max(longest, ce.D-start.D)
			allExact = allExact && cExact
		}
		d, exact = longest, allExact
	case "sequence":
		end, seqExact := p.sequence(s.Children, start, depth+1, joined)
		d, exact = end.D-start.D, seqExact
	case "repeat":
		// At least one round.
		end, _ := p.sequence(s.Children, start, depth+1, joined)
		d, exact = end.D-start.D, false
	case "await":
		// It lasts until the steps it joins end: from an exact start, that is a lower bound
		// of its duration (from a lower bound, nothing is known of it).
		d, exact = 0, false
		for _, a := range s.Await {
			if end, ok := p.ends[a]; ok && start.Exact && end.D > start.D {
				d = max(d, end.D-start.D)
			}
		}
	}
	switch planned := d; {
	case s.Params == nil:
	case exact:
		p.Entries[idx].Duration = &planned
	case d > 0:
		p.Entries[idx].MinDuration = &planned
	}
	if s.Timeout > 0 && d > s.Timeout {
		// The step's timeout ends it (vet refuses that; the steps after it start then).
		d, exact = s.Timeout, false
	}
	end := start.add(d, exact)
	if s.Name != "" {
		if p.ends == nil {
			p.ends = map[string]Offset{}
		}
		p.ends[s.Name] = end
	}
	return end, exact
}

// knownDuration returns a step's duration when the plan can know it: exact, or a lower bound.
func knownDuration(s *Step) (time.Duration, bool) {
	if s.Params == nil {
		return 0, false
	}
	pl := s.Params.Plan()
	return pl.Duration, pl.Exact
}

// Summary describes a step's main parameters in a few words, on one line.
func Summary(s *Step) string {
	if s.Params == nil {
		return ""
	}
	return SummaryOf(s.Params)
}

// SummaryOf is Summary of parameters (e.g. after interpolation).
func SummaryOf(p schema.Params) string {
	return strings.Join(strings.Fields(p.Summary()), " ")
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// PlanObject is one object an apply step applies, rendered as YAML; ${...} stay as written.
type PlanObject struct {
	Step   string `json:"step"`
	Pos    Pos    `json:"pos"`
	Object string `json:"object"`
	YAML   string `json:"yaml"`
}

// RenderedObjects lists the objects of every apply step of sc, as the API server would get
// them (the ${...} are filled when the step runs).
func RenderedObjects(sc *Scenario) []PlanObject {
	var out []PlanObject
	for _, ph := range sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			p, ok := s.Params.(*schema.Apply)
			if !ok {
				return
			}
			for _, o := range p.Objects {
				kind, _ := o["kind"].(string)
				md, _ := o["metadata"].(map[string]any)
				name, _ := md["name"].(string)
				b, err := yaml.Marshal(o)
				if err != nil {
					continue
				}
				out = append(out, PlanObject{Step: s.Label(), Pos: s.Pos, Object: kind + "/" + name, YAML: string(b)})
			}
			for _, f := range p.Files {
				out = append(out, PlanObject{Step: s.Label(), Pos: s.Pos, Object: "file " + f, YAML: "# applied from " + f + " as it is when the step runs\n"})
			}
		})
	}
	return out
}
