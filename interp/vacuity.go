package interp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// An expectation that reads only loads holds of every load fortio could record when it only
// restates fortio's own sums or orders (ok + errors == requests, min <= p99, code503 <=
// requests) or is a tautology (code503 == 0 || code503 > 0): it
// cannot fail, whatever the run did, and so proves nothing. dsl's checks catch the forms they
// can see (x == x, a count >= 0); these need what a load is, so vet judges such an expectation
// on loads fortio could record — none, each code alone, mixes, every count from 0 to 1e9 and
// the numbers the expectation writes and their neighbours (of a load whose step fixes its
// requests, only counts that add up to them), latencies in order — and refuses
// it when it held of every one. A refusal is sound for what was judged: each judged load is
// one fortio could record; an expectation false of a load not judged would be wrongly refused,
// which the numbers it writes (taken with their neighbours) make unlikely.

// CheckCannotFail refuses sc's expectations and assert steps that read only loads and stats
// (and vars, at sc's values, that sc does not sweep: varsJudged) and hold of every load and every value of the stats judged. The stats (a snapshot's, a
// delta's) are drawn apart from one another and from the loads: Envoy's own sums across
// stats are not assumed, so only an expectation that holds whatever they are is refused. What
// the plan guarantees is assumed (vacuity_plan.go): a delta whose pair of snapshots is known is
// their difference, and steps' times keep the order the plan gives them.
//
// sweptByFlag are the vars a --sweep gives values: an expectation reading one is left to each
// combination's check (CheckCannotFailSwept), as one reading a var the scenario sweeps is; at
// the declared value, which no run has, it would be judged for nothing.
func CheckCannotFail(sc *dsl.Scenario, sweptByFlag ...string) dsl.Errors {
	if len(sweptByFlag) == 0 {
		return checkCannotFail(sc, nil, nil)
	}
	m := map[string]bool{}
	for _, n := range sweptByFlag {
		m[n] = true
	}
	return checkCannotFail(sc, nil, m)
}

// CheckCannotFailOf is CheckCannotFail of a scenario that has problems (errs, the load's:
// Result.Partial), so that vet says every problem in one run, not this one once the others
// are fixed. It judges only what the problems leave whole: nothing when one of them is of
// the scenario as a whole (its vars, target, local world: what every sample is drawn from),
// not an expectation's that did not compile nor an expectation with a problem of its own
// (said already); with a step's problem, only expectations that neither name that step nor
// read stats or step times (a broken step's place on the timeline, what it snapshots, are
// not known), and no assertion or until of that step.
func CheckCannotFailOf(sc *dsl.Scenario, errs dsl.Errors) dsl.Errors {
	prefix := sc.Name + "."
	under := func(path, p string) bool { return path == p || strings.HasPrefix(path, p+".") }
	var stepErrs []string // the paths of the problems of steps
	erred := map[string]bool{}
	for _, e := range errs {
		if e.Warning != "" {
			continue
		}
		if e.Path == "" {
			return nil // whose it is is not known
		}
		if !strings.HasPrefix(e.Path, prefix) {
			continue
		}
		rest := strings.TrimPrefix(e.Path, prefix)
		switch {
		case strings.HasPrefix(rest, "expect."):
			erred[e.Path] = true
		case strings.HasPrefix(rest, "setup.") || strings.HasPrefix(rest, "steps.") || strings.HasPrefix(rest, "catch.") || strings.HasPrefix(rest, "cleanup."):
			stepErrs = append(stepErrs, rest)
		default:
			return nil
		}
	}
	var broken []*dsl.Step // the steps with a problem, and the blocks holding one
	for _, ph := range [][]*dsl.Step{sc.Setup, sc.Steps, sc.Catch, sc.Cleanup} {
		dsl.Walk(ph, func(st *dsl.Step) {
			for _, p := range stepErrs {
				if st.Path != "" && (under(p, st.Path) || under(st.Path, p)) {
					broken = append(broken, st)
					return
				}
			}
		})
	}
	if len(stepErrs) > 0 && len(broken) == 0 {
		return nil // a problem of a step not found: nothing is known whole
	}
	keep := func(e *dsl.Expr) bool {
		if len(broken) == 0 {
			return true
		}
		if len(e.Refs) > 0 || len(e.ErrorReads) > 0 || len(e.Outcomes) > 0 || timeRead.MatchString(e.Src) {
			return false
		}
		for _, st := range broken {
			if st.Name != "" && slices.Contains(e.Names, st.Name) {
				return false
			}
		}
		return true
	}
	return checkCannotFailIf(sc, nil, nil, func(path string, e *dsl.Expr, at *dsl.Step) bool {
		if at != nil {
			return !slices.Contains(broken, at) && keep(e)
		}
		return !erred[path] && keep(e)
	})
}

// CheckCannotFailSwept is CheckCannotFail of one combination of a sweep, sc loaded with the
// combination's values: it judges only the expectations and asserts that read a var of swept
// (the matrix's swept vars; CheckCannotFail of the scenario judged the others), with those
// values, and a load whose requests a var sets as making that many. Its messages do not say
// the values: the caller says which combinations a problem is found in.
func CheckCannotFailSwept(sc *dsl.Scenario, swept []string) dsl.Errors {
	if len(swept) == 0 {
		return nil
	}
	m := map[string]bool{}
	for _, n := range swept {
		m[n] = true
	}
	return checkCannotFail(sc, m, nil)
}

// checkCannotFail is CheckCannotFail, or CheckCannotFailSwept when swept is not nil.
func checkCannotFail(sc *dsl.Scenario, sweptVars, sweptByFlag map[string]bool) dsl.Errors {
	return checkCannotFailIf(sc, sweptVars, sweptByFlag, nil)
}

// checkCannotFailIf is checkCannotFail of the expressions judge says to judge (nil: all), by
// their path, and the step that judges it (nil: an expectation).
func checkCannotFailIf(sc *dsl.Scenario, sweptVars, sweptByFlag map[string]bool, judge func(path string, e *dsl.Expr, at *dsl.Step) bool) dsl.Errors {
	swept := sweptVars != nil
	var errs dsl.Errors
	var env map[string]any // the judge's, made once for the scenario's judged expectations
	type judged struct {
		e          *dsl.Expr
		path, word string
		at         *dsl.Step // the assert step that judges it; nil: judged at the end
	}
	var all []judged
	for i, e := range sc.Expect {
		all = append(all, judged{e, sc.ExpectPath(i), "expectation", nil})
	}
	// An assert step's expression is an expectation judged during the run: one that cannot
	// fail passes the step whatever the run did. A wait's or a repeat's until is judged the
	// same way: one that cannot fail ends the wait at its first look, the repeat after its
	// first round, whatever the run did ("came up within 3 rounds" proves nothing).
	for _, ph := range [][]*dsl.Step{sc.Setup, sc.Steps, sc.Catch, sc.Cleanup} {
		dsl.Walk(ph, func(st *dsl.Step) {
			if st.Expr == nil {
				return
			}
			switch st.Kind {
			case "assert":
				all = append(all, judged{st.Expr, sc.Name + "." + st.Path + ".assert", "assertion", st})
			case "wait", "repeat":
				all = append(all, judged{st.Expr, sc.Name + "." + st.Path + "." + st.Kind + ".until", "the until of a " + st.Kind, st})
			}
		})
	}
	var plan *planOrder // made once, for the first expectation that reads times or deltas
	for _, j := range all {
		e := j.e
		if judge != nil && !judge(j.path, e, j.at) {
			continue
		}
		if swept && !readsSwept(sweptVars, e) && !readsLoadFixedBy(sc, e) || !swept && sweptByFlag != nil && readsSwept(sweptByFlag, e) {
			continue
		}
		r, ok := judgedReads(sc, e, swept)
		if !ok {
			continue
		}
		loads, logs, stats := r.loads, r.logs, r.stats
		if env == nil {
			env = NewJudge(&Record{Vars: sc.Vars, Namespaces: sc.Generated, Results: map[string]*Result{}}, sc).Env()
		}
		if plan == nil && (len(r.times) > 0 || len(r.stats) > 0 || len(r.outcomes) > 0) {
			plan = newPlanOrder(sc)
		}
		// One that reads loads only and no swept var is judged alike in every combination
		// whose loads it reads have the same counts of requests (its samples are of its
		// source, the non-swept vars' values and those counts): once (vet of examples/: 8 ms
		// of its 120 judging sweep.cue's expectations six times).
		memo := ""
		if swept && !readsSwept(sweptVars, e) && len(r.logs)+len(r.stats)+len(r.outcomes)+len(r.times)+len(r.execs)+len(r.series) == 0 {
			memo = fmt.Sprint(sc.Pos, "\x00", j.path, "\x00", e.Src, "\x00", r.loads, r.requests)
			if _, found := alikeJudged.Load(memo); found {
				continue // it can fail (a vacuous one is refused, and its load stops there)
			}
		}
		n, holds := holdsOfEvery(env, sc, plan, j.at, e, r)
		if !holds {
			if memo != "" && alikeMade.Add(1) <= maxSamplers {
				alikeJudged.Store(memo, true)
			}
			continue
		}
		var msg string
		switch {
		case len(r.outcomes)+len(r.times)+len(r.execs) > 0:
			var what []string
			if len(r.outcomes) > 0 {
				what = append(what, "every outcome of the steps whose outcome or error it reads (passed, failed, error, skipped, interrupted), with errors of their kind and the strings it writes; passed with no error for a step whose failure would have stopped the run before it is judged (no mayFail, under no block that may fail: the expectations are judged only when the steps passed)")
			}
			if len(r.times) > 0 {
				what = append(what, "start and end times of the steps it times (each ending at or after it starts, in the order the plan guarantees and no other; not started, or not ended, where it is judged unless the plan says it ran to its end by then)")
			}
			if len(r.execs) > 0 {
				what = append(what, "exit codes (0, 1, 2, 126, 127, 255 and the numbers it writes) and outputs (empty, a line, the strings it writes, strings of the lengths and line counts it writes and their neighbours, a long one of many lines) of the commands it reads")
			}
			if len(loads)+len(logs)+len(stats) > 0 {
				what = append(what, "with the loads, logs and stats it reads drawn as below")
			}
			msg = fmt.Sprintf("%s %q holds whatever the run records of what it reads (judged on %d: %s): it cannot fail, so it proves nothing; expected a claim a wrong outcome breaks, e.g. == the value the claim gives",
				j.word, e.Src, n, strings.Join(what, "; "))
			// !(o.stdout matches '^bar$'), testscript's ! stdout '^bar$': the $ is why.
			for _, why := range e.Warned(dsl.LintOutputAnchor) {
				msg += "; " + why
			}
		case len(r.series) > 0:
			msg = fmt.Sprintf("%s %q holds whatever the samples of the series it reads are (judged on %d: 1 to 4 samples and as many as the numbers it writes and their neighbours, each stat it reads from 0 to 1e9, the numbers it writes and their neighbours, in any order from sample to sample, or not yet created): it cannot fail, so it proves nothing (max is never below min, first or last, count is the number of samples); expected a bound a wrong outcome breaks, e.g. %s.max.<stat> <= the limit the claim gives",
				j.word, e.Src, n, r.series[0])
		case len(logs) > 0:
			msg = fmt.Sprintf("%s %q holds whatever the log has (judged on %d: no line, lines of each code alone and mixed, 1 to 1e9 of them, lines other than access lines, each flag and details it reads on none, some or every access line, the numbers it writes and their neighbours): it cannot fail, so it proves nothing (a log counts each access line under one code, its flags and its details, and count counts every line); expected a bound a wrong outcome breaks, e.g. %s.codes[\"503\"] == 0, or == the figure the claim gives",
				j.word, e.Src, n, logs[0])
		case len(stats) == 0:
			counts := "none, each code alone and mixed, 1 to 1e9 requests"
			if fixed := fixedText(r); fixed != "" {
				counts = "each code alone and mixed, " + fixed
			}
			msg = fmt.Sprintf("%s %q holds of every load fortio could record (judged on %d: %s, the numbers it writes and their neighbours, latencies in order): it cannot fail, so it proves nothing (fortio counts each request under one code, ok as the 2xx and 418, errors as the rest, and orders min ≤ p50 ≤ … ≤ max); expected a bound a wrong outcome breaks, e.g. %s.code503 == 0, or == the figure the claim gives",
				j.word, e.Src, n, counts, loads[0])
		default:
			what := "each stat it reads from 0 to 1e9 (a counter's delta is never negative when judged, allowReset or not), the numbers it writes and their neighbours"
			for _, s := range stats {
				if schema.OnOff(s.Stat) {
					what += "; " + s.Stat + " only 0 or 1 (Envoy sets a circuit breaker's open gauge to 1 while it is at its limit, else 0)"
					break
				}
			}
			if len(deltaPairs(sc, plan, j.at, stats)) > 0 {
				what += "; a delta the difference of the two snapshots it compares, as the judge computes it"
			}
			if len(loads) > 0 {
				what += ", with loads fortio could record"
			}
			msg = fmt.Sprintf("%s %q holds whatever the stats it reads are (judged on %d: %s): it cannot fail, so it proves nothing; expected a bound a wrong outcome breaks, e.g. == the figure the claim gives",
				j.word, e.Src, n, what)
		}
		if swept {
			// One message for every combination it is found in (the caller lists them):
			// what was drawn differs with the values.
			at := "at the values a combination gives the swept vars it reads"
			if !readsSwept(sweptVars, e) {
				at = "with the requests a combination's vars give the loads it reads (fortio makes exactly those or the step fails)"
			}
			msg = fmt.Sprintf("%s %q holds whatever the run records of what it reads, %s (drawn as vet draws them at the scenario's own values): it cannot fail there, so it proves nothing; expected a claim a wrong outcome breaks in every combination, e.g. == the figure the claim gives",
				j.word, e.Src, at)
		} else if shown, _ := varValues(sc, e); len(shown) > 0 {
			msg += fmt.Sprintf(" (judged with %s: the values this scenario runs with, declared or given with --var)", strings.Join(shown, ", "))
		}
		errs = append(errs, &dsl.Error{Pos: e.Pos, Path: j.path, Msg: msg})
	}
	return errs
}

// fixedText says which loads r reads make a number of requests their step fixes ("" when
// none does): their requests add up to it.
func fixedText(r reads) string {
	var parts []string
	others := false
	for k, name := range r.loads {
		part := fmt.Sprintf("%s's %g", name, r.requests[k])
		switch {
		case r.requests[k] == 0:
			others = true
		case !slices.Contains(parts, part):
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	text := "adding up to the requests the step fixes (" + strings.Join(parts, ", ") + ")"
	if others {
		text += ", any count from 0 to 1e9 of the others"
	}
	return text
}

// notJudgedNames are the names an expectation reads whose values a sample does not give: an
// expectation reading one is not judged here.
// (schema.OnlyIfFunc is judged: its samples' outputs are whole, and the logs entries it
// reads are not judged by readsOnly.)
var notJudgedNames = map[string]bool{"backends": true, "blackholes": true, "target": true, "ns": true, dsl.HostsFunc: true, dsl.EnvoyFunc: true, dsl.EnvoyCmpFunc: true, dsl.EnvoyJSONFunc: true}

// reads are what an expectation reads that a sample gives: one-client loads, logs steps read
// by their counts, exec steps read by their exit code and output (each a sample of its own),
// stats of snapshots and deltas, sampled series of snapshots (their samples and aggregates,
// with the stats read of them), the outcomes and errors of steps, and the start and end
// times of steps.
type reads struct {
	loads, logs, execs []string
	// requests are the loads' requests as their steps fix them before the run (0: not
	// fixed), in the order of loads.
	requests        []float64
	stats           []dsl.Ref
	outcomes, times []string
	series          []string
	seriesStats     []string // the stats read of the series (by aggregate, sample or closure)
}

// timeRead finds started.<step> and ended.<step>; started[...] (a step chosen by an
// expression) is not judged.
var timeRead = regexp.MustCompile(`\b(?:started|ended)\b(\s*\.\s*(\w+)|)`)

// hasTimeRead finds has(started, 'x') and has(ended, 'x') (x a step's name, in either quotes).
var hasTimeRead = regexp.MustCompile(`\bhas\(\s*(?:started|ended)\s*,\s*(?:"([\w-]+)"|'([\w-]+)')\s*\)`)

// judgedReads are what e reads when it reads nothing else a run records, and no var (the
// functions aside); ok is false otherwise, or when it reads nothing a sample gives.
func judgedReads(sc *dsl.Scenario, e *dsl.Expr, swept bool) (r reads, ok bool) {
	// One that reads a var is judged with the value the scenario has (declared, or --var),
	// which the run has too: `fortio.code503 >= vars.minShed` with minShed 0 cannot fail in
	// it. Not when a var it reads is swept (each combination has its own value, and is not
	// judged here), secret (its value is not shown) or read as a whole.
	if e.Program == nil || e.Now || len(e.Captures) > 0 || !varsJudged(sc, e, swept) {
		return reads{}, false
	}
	for _, ref := range e.Refs {
		if ref.Guarded {
			return reads{}, false
		}
		if ref.Kind == dsl.RefSeries || ref.Kind == dsl.RefSource {
			// Of a series (read by name below, or the expression is not judged).
			if !slices.Contains(r.seriesStats, ref.Stat) {
				r.seriesStats = append(r.seriesStats, ref.Stat)
			}
			continue
		}
		r.stats = append(r.stats, ref)
	}
	snapshots := map[string]bool{}
	for _, ref := range r.stats {
		if ref.Kind == dsl.RefSnapshot {
			snapshots[ref.Name] = true
		}
	}
	for _, n := range e.Names {
		if notJudgedNames[n] {
			return reads{}, false
		}
		switch n {
		case "outcome", "error":
			if len(e.Outcomes) == 0 {
				return reads{}, false // read whole
			}
			continue
		case "started", "ended":
			times := map[string]bool{}
			// has(started, 'x') and has(ended, 'x') read whether x ran, and ran to its end,
			// where the expression is judged: drawn as the times are (x missing from the
			// samples in which it may not have started or ended there).
			src := hasTimeRead.ReplaceAllStringFunc(e.Src, func(m string) string {
				sub := hasTimeRead.FindStringSubmatch(m)
				times[sub[1]+sub[2]] = true
				return "true"
			})
			for t := range times {
				if sc.Step(t) == nil {
					return reads{}, false
				}
			}
			for _, m := range timeRead.FindAllStringSubmatch(src, -1) {
				if m[2] == "" || sc.Step(m[2]) == nil {
					return reads{}, false // started[x], or a let's name
				}
				times[m[2]] = true
			}
			for t := range times {
				r.times = append(r.times, t)
			}
			sort.Strings(r.times)
			continue
		}
		st := sc.Step(n)
		switch {
		case st == nil:
			continue // vars, delta, a function, a let
		case snapshots[n] && st.Kind == "snapshot" && st.Every == 0:
			continue
		case st.Kind == "snapshot" && st.Every > 0:
			r.series = append(r.series, n)
			continue
		case st.Kind == "logs" && st.Every == 0 && readsOnly(e.Src, n, logCountRead):
			r.logs = append(r.logs, n)
			continue
		case st.Kind == "exec" && st.Every == 0 && readsOnly(e.Src, n, execRead):
			r.execs = append(r.execs, n)
			continue
		}
		p, isLoad := st.Params.(*schema.Load)
		if !isLoad || st.Kind != "load" || (p.From != nil && p.From.Pods > 0) {
			return reads{}, false
		}
		r.loads = append(r.loads, n)
		req := requestsBeforeRun(sc, p)
		if swept {
			req = float64(p.FixedRequests()) // the combination's own value: this run's
		}
		r.requests = append(r.requests, req)
	}
	r.outcomes = append(r.outcomes, e.Outcomes...)
	if len(r.seriesStats) > 0 && len(r.series) == 0 {
		return reads{}, false // a stat of a series read through a let or an index of another value
	}
	return r, len(r.loads)+len(r.logs)+len(r.execs)+len(r.stats)+len(r.outcomes)+len(r.times)+len(r.series) > 0
}

// varsJudged reports whether e is judged with the values of the vars it reads (judgedReads).
func varsJudged(sc *dsl.Scenario, e *dsl.Expr, swept bool) bool {
	names, whole := e.VarsRead()
	if whole {
		return false
	}
	for _, n := range names {
		v, ok := sc.Vars[n]
		if !ok || len(sc.Sweep[n]) > 0 && !swept || slices.Contains(sc.Secrets, n) {
			return false
		}
		switch v.(type) {
		case float64, int, int64, string, bool:
		default:
			return false // a list or a struct: its values are not among the sampled ones
		}
	}
	return true
}

// readsSwept reports whether e reads a var of swept.
func readsSwept(swept map[string]bool, e *dsl.Expr) bool {
	names, whole := e.VarsRead()
	return whole || slices.ContainsFunc(names, func(n string) bool { return swept[n] })
}

// alikeJudged are the judgements of one combination that others share (checkCannotFail), up to
// maxSamplers of them: keys of expectations found to be able to fail.
var (
	alikeJudged sync.Map // string -> bool
	alikeMade   atomic.Int32
)

// readsLoadFixedBy reports whether e reads a load whose request count the scenario's check
// could not know (its CUE may read a var: requests: vars.n) and a combination's does: in it,
// fortio.requests < 9 with vars.n swept over 2, 4, 8 cannot fail, though it reads no var.
func readsLoadFixedBy(sc *dsl.Scenario, e *dsl.Expr) bool {
	if !sc.ParamsMayReadVars() {
		return false // the scenario's own check judged it with the same count
	}
	for _, n := range e.Names {
		if st := sc.Step(n); st != nil && st.Kind == "load" {
			if p, ok := st.Params.(*schema.Load); ok && p.FixedRequests() > 0 {
				return true
			}
		}
	}
	return false
}

// varValues are e's reads of vars with their values, as a message shows them
// ("vars.minShed = 0"), and as literals the samples draw near (samplingSource).
func varValues(sc *dsl.Scenario, e *dsl.Expr) (shown []string, lits string) {
	names, _ := e.VarsRead()
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		v := sc.Vars[n]
		lit := dsl.Stringify(v)
		if s, ok := v.(string); ok {
			lit = strconv.Quote(s)
		}
		shown = append(shown, "vars."+n+" = "+lit)
		b.WriteString(" " + lit)
	}
	return shown, b.String()
}

// requestsBeforeRun is the number of requests a load of p records whenever it records one: its
// requests (schema.Load.FixedRequests), when the scenario's CUE reads no var that could change
// it (a sweep's or --var's value is another scenario's). fortio makes exactly that many (-n),
// but for one request at a fixed qps, which fortio makes two; a load it stops early errs and
// records nothing, and so does one that recorded another count (schema.Load.Run). 0 when the
// load runs for a duration, or the count is not known before the run.
func requestsBeforeRun(sc *dsl.Scenario, p *schema.Load) float64 {
	if sc.ParamsMayReadVars() {
		return 0
	}
	return float64(p.FixedRequests())
}

// logCountRead is what may follow a logs step's name for readsOnly: its count or one key of
// its codes, flags or details (what a log sample gives: its lines, entries and captures are
// not drawn). execRead is an exec step's exit code and output (not its captures).
var (
	logCountRead = regexp.MustCompile(`^\.(?:count\b|(?:codes|flags|details)\["[^"]*"\])`)
	execRead     = regexp.MustCompile(`^\.(?:exit|stdout|stderr)\b`)
)

// readsOnly reports whether src reads step name only as read allows after each mention. Any
// other mention of the name (spaced, whole, in a string) says no.
func readsOnly(src, name string, read *regexp.Regexp) bool {
	found := false
	for i := 0; ; {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return found
		}
		j += i
		end := j + len(name)
		i = end
		before := j > 0 && (isWordByte(src[j-1]) || src[j-1] == '.')
		after := end < len(src) && isWordByte(src[end])
		if before || after {
			continue // part of another name
		}
		if !read.MatchString(src[end:]) {
			return false
		}
		found = true
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// holdsOfEvery judges e on samples of each of loads and of stats; it reports how many and
// whether e held of every one (an error or a non-boolean is not holding). plan is what the
// scenario's plan guarantees (nil when e reads neither times nor stats), at the assert step
// that judges e (nil: the end of the run).
func holdsOfEvery(env map[string]any, sc *dsl.Scenario, plan *planOrder, at *dsl.Step, e *dsl.Expr, r reads) (int, bool) {
	loads, logs, stats := r.loads, r.logs, r.stats
	_, lits := varValues(sc, e)
	samples := samplerOf(e.Src + lits) // the numbers and strings its vars hold are drawn as written ones
	// env is the environment the judge gives expressions of a run that recorded nothing: each
	// sample sets the loads' values in it (what a recorded load's ExprValue is) and the
	// stats'; e reads nothing else a run records.
	delta, deltas, snaps := schema.Stats{}, map[[2]string]schema.Stats{}, map[string]schema.Stats{}
	if len(stats) > 0 {
		env["delta"] = delta
		env[dsl.DeltaFunc] = func(a, b string) schema.Stats { return deltas[[2]string{a, b}] }
		for _, r := range stats {
			switch r.Kind {
			case dsl.RefDeltaPair:
				if deltas[[2]string{r.From, r.To}] == nil {
					deltas[[2]string{r.From, r.To}] = schema.Stats{}
				}
			case dsl.RefSnapshot:
				if snaps[r.Name] == nil {
					snaps[r.Name] = schema.Stats{}
					env[r.Name] = snaps[r.Name]
				}
			}
		}
	}
	var allow map[string]bool // the counters allowReset lists: a reset's delta is the later value
	if sc.ExprNames != nil {
		allow = sc.ExprNames.AllowReset
	}
	pairs := deltaPairs(sc, plan, at, stats)
	var timed []*dsl.Step
	for _, name := range r.times {
		timed = append(timed, sc.Step(name))
	}
	// The outcomes each step read may have where e is judged: only passed for one whose
	// failure would have stopped the run before (at the end: the expectations are judged
	// only when the steps all passed).
	sets, expectFail := make([][]string, len(r.outcomes)), make([]bool, len(r.outcomes))
	for k, name := range r.outcomes {
		st := sc.Step(name)
		switch {
		case plan.surelyPassed(st, at):
			sets[k], expectFail[k] = []string{dsl.OutcomePassed}, st.ExpectFail
		case at != nil && !plan.endedBy(st, at):
			sets[k] = midRunOutcomes // a step in the background may still run
		case at != nil:
			sets[k] = sampledOutcomes // it ended (or never ran) before at is judged: never running
		default:
			sets[k] = sampledOutcomes
		}
	}
	n := samples.n
	for _, req := range r.requests {
		n = max(n, samples.fixedLen(req))
	}
	if samples.bigLen && (len(r.execs)+len(r.outcomes) > 0 || len(r.series) > 0 && (strings.Contains(e.Src, "count") || strings.Contains(e.Src, "samples"))) {
		// A length, line count or number of samples past those drawn may be what it
		// bounds: not judged.
		return 0, false
	}
	if len(r.execs) > 0 {
		n = max(n, len(samples.exits)*len(samples.outputs())) // every output with every exit
	}
	if len(r.outcomes) > 0 {
		n = max(n, len(midRunOutcomes)*len(samples.outputs())) // every error string
	}
	if len(r.series) > 0 {
		n = max(n, 4*len(samples.seriesLens))
	}
	// The samples up to n draw each command apart from the others (exec's offset by k), so
	// two commands never record the same exit or output there; the alike ones after them draw
	// every command as the first, so a.stdout != b.stdout meets equal outputs (and fails).
	alike := 0
	if len(r.execs) > 1 {
		alike = len(samples.exits) * len(samples.outputs())
	}
	for i := range n + alike {
		for k, name := range loads {
			// Each load its own sample: two loads read together are judged apart as well
			// as alike (k = 0 gives both the same). A load of a fixed count of requests
			// is drawn among those that count, as two loads of the same count are alike.
			if req := r.requests[k]; req > 0 {
				env[name] = samples.fixed((i+k*7)%samples.fixedLen(req), req)
				continue
			}
			env[name] = samples.at((i + k*7) % samples.n) // its maps are only read
		}
		for k, name := range logs {
			k += len(loads) // apart from the loads' samples too
			env[name] = samples.log((i+k*7)%samples.n, i+k)
		}
		for k, name := range r.execs {
			if i >= n {
				env[name] = samples.exec(i-n, 0)
				continue
			}
			env[name] = samples.exec(i, k)
		}
		if len(r.outcomes) > 0 {
			outcome, errs := map[string]string{}, map[string]string{}
			div := 1
			for k, name := range r.outcomes {
				o, e := samples.outcome(i, k, div, sets[k], expectFail[k])
				div *= len(sets[k])
				outcome[name] = o
				if o != dsl.OutcomeSkipped && o != dsl.OutcomePending { // a step that did not run has no error (the judge's has(error, x) is false)
					errs[name] = e
				}
			}
			env["outcome"], env["error"] = outcome, errs
		}
		if len(timed) > 0 {
			started, ended := plan.timesOf(timed, samples.reals, i)
			div := 1
			for _, s := range timed {
				// Where at is judged, a step that may still run has started and not ended,
				// or not started yet (has(ended, x), has(started, x) false).
				if !plan.surelyEnded(s, at) {
					switch (i / div) % 3 {
					case 1:
						delete(ended, s.Name)
					case 2:
						delete(started, s.Name)
						delete(ended, s.Name)
					}
					div *= 3
				}
			}
			env["started"], env["ended"] = started, ended
		}
		for k, name := range r.series {
			env[name] = samples.series(i, k, r.seriesStats, sc.Step(name))
		}
		for k, v := range statsSample(samples, i, stats, pairs, allow) {
			switch r := stats[k]; r.Kind {
			case dsl.RefDelta:
				delta[r.Stat] = v
			case dsl.RefDeltaPair:
				deltas[[2]string{r.From, r.To}][r.Stat] = v
			case dsl.RefSnapshot:
				snaps[r.Name][r.Stat] = v
			}
		}
		out, err := expr.Run(e.Program, env)
		if nv := (*schema.NoValueError)(nil); errors.As(err, &nv) {
			continue // the judge errs there (a code of a load no request of which was answered): no counter-example
		}
		if zero := (*dsl.ZeroDivisor)(nil); errors.As(err, &zero) {
			continue // a division by zero has no value there either: the judge errs
		}
		if ok, _ := out.(bool); err != nil || !ok {
			return i + 1, false
		}
	}
	return n + alike, true
}

var (
	numberLit = regexp.MustCompile(`(?:^|[^\w.])(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)`)
	strLit    = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'`)
	codeLit   = regexp.MustCompile(`\bcode(\d{3}|_1)\b|"(-1|\d{3})"`)
	ipLit     = regexp.MustCompile(`"(\d{1,3}(?:\.\d{1,3}){3}:\d+|\[[0-9a-fA-F:]+\]:\d+)"`)
)

// loadSampler makes loads fortio could record, for judging an expression of source src, as
// they are asked for (most expressions are false of one of the first few): the discriminating
// ones first (none, all 200, all 503, half and half), then every count of every code alone,
// then mixes, each with fortio's sums (Recount) and ordered latencies.
type loadSampler struct {
	codes, ips []string
	// strs are the strings src writes (for outputs and errors), outs those and strings of
	// the lengths and line counts src writes (and their neighbours) and a long output of
	// many lines, exits the exit codes a command's sample has.
	strs, outs []string
	exits      []float64
	lens       []int // the lengths and line counts of outputs drawn
	outsOnce   sync.Once
	// seriesLens are the numbers of samples a series' sample has: 1 to 4, and the numbers
	// src writes and their neighbours. bigLen says src writes a number past the longest
	// output and series drawn: a length or count it bounds is not judged.
	seriesLens []int
	bigLen     bool
	// flags and details are the keys of a log's flags and details that src reads.
	flags, details []string
	counts, reals  []float64
	n              int

	mu sync.Mutex
	// loads are the loads made so far: by their fixed count of requests, 0 for any count.
	// Each list draws from its own source, so that what one holds does not depend on
	// which lists were asked for before it.
	loads map[float64]*loadList
}

// loadList is the loads of one count of requests (0: any) made so far, as they are asked for.
type loadList struct {
	rng  *rand.Rand
	made []schema.LoadResult
}

// maxFixedLists bounds the counts of requests a sampler keeps loads of: beyond them, a
// count's loads are made again at each judging.
const maxFixedLists = 64

const mixedLoads = 96

// maxDrawnLen bounds the length and line count of an output drawn and the number of samples
// of a series drawn.
const maxDrawnLen = 1 << 12

func newLoadSampler(src string) *loadSampler {
	ls := &loadSampler{
		codes:  []string{"200", "503", "-1", "418", "404", "500", "201"},
		counts: []float64{1, 2, 3, 5, 10, 20, 100, 1000, 1e6, 1e9},
		reals:  []float64{0, 0.001, 0.5, 1, 2.5, 10, 100, 1000, 6e4, 1e7},
		loads:  map[float64]*loadList{0: {rng: rand.New(rand.NewPCG(1, 2))}},
	}
	for _, m := range codeLit.FindAllStringSubmatch(src, -1) {
		c := strings.Replace(m[1]+m[2], "_", "-", 1)
		if !slices.Contains(ls.codes, c) {
			ls.codes = append(ls.codes, c)
		}
	}
	ls.seriesLens = []int{1, 2, 3, 4}
	lens := []int{}
	for _, m := range numberLit.FindAllStringSubmatch(src, -1) {
		l, err := strconv.ParseFloat(m[1], 64)
		if err != nil || math.IsInf(l, 0) {
			continue
		}
		if l+1 > maxDrawnLen {
			ls.bigLen = true
		}
		for _, v := range []float64{l - 1, l, l + 1, math.Floor(l / 2), 2 * l} {
			if v >= 1 && v <= maxDrawnLen && v == math.Trunc(v) {
				if !slices.Contains(lens, int(v)) {
					lens = append(lens, int(v))
				}
				if !slices.Contains(ls.seriesLens, int(v)) {
					ls.seriesLens = append(ls.seriesLens, int(v))
				}
			}
		}
		for _, v := range []float64{l - 1, l, l + 1, math.Floor(l / 2), 2 * l} {
			if v >= 1 && v == math.Trunc(v) && !slices.Contains(ls.counts, v) {
				ls.counts = append(ls.counts, v)
			}
		}
		for _, v := range []float64{l - 0.5, l, l + 0.5, l / 2, 2 * l} {
			if v >= 0 && !slices.Contains(ls.reals, v) {
				ls.reals = append(ls.reals, v)
			}
		}
	}
	for _, m := range keyRead.FindAllStringSubmatch(src, -1) {
		switch key := m[3] + m[4]; m[2] {
		case "flags":
			ls.flags = append(ls.flags, key)
		case "details":
			ls.details = append(ls.details, key)
		}
	}
	ls.strs = []string{"", "ok\n"}
	for _, m := range strLit.FindAllStringSubmatch(src, -1) {
		// The literal's value (its escapes are the characters they write: "2\n" is a line
		// a command prints), and as written, in case unquoting differs from expr's.
		for _, v := range []string{unquoteLit(m[1], m[2]), m[1] + m[2]} {
			if !slices.Contains(ls.strs, v) {
				ls.strs = append(ls.strs, v)
			}
		}
	}
	ls.lens = lens
	ls.exits = []float64{0, 1, 2, 126, 127, 255}
	for _, v := range ls.counts {
		if v <= 255 && !slices.Contains(ls.exits, v) {
			ls.exits = append(ls.exits, v)
		}
	}
	for _, m := range ipLit.FindAllStringSubmatch(src, -1) {
		ls.ips = append(ls.ips, m[1])
	}
	ls.ips = append(ls.ips, "127.0.0.1:8080")
	ls.n = 4 + len(ls.codes)*len(ls.counts) + mixedLoads
	return ls
}

// outputs are the outputs and errors drawn (made on first use: only an expression that reads
// a command or an outcome needs them): the strings src writes first, then one of each length
// and line count it writes (and their neighbours), a long one of many lines, and one of many
// lines around each string it writes.
func (ls *loadSampler) outputs() []string {
	ls.outsOnce.Do(func() {
		outs := slices.Clone(ls.strs)
		for _, v := range ls.lens {
			outs = append(outs, strings.Repeat("x", v), strings.Repeat("x\n", v))
		}
		var long strings.Builder
		for i := range 40 {
			fmt.Fprintf(&long, "line %d of a long output\n", i+1)
		}
		outs = append(outs, long.String())
		for _, v := range ls.strs[2:] {
			outs = append(outs, "before\n"+v+"\nafter\n")
		}
		ls.outs = outs
	})
	return ls.outs
}

// unquoteLit is the value of a string literal of expr whose text between its quotes is dq
// (double-quoted) or sq (single-quoted): Go's escapes, which expr's are. A literal it cannot
// read is its text.
func unquoteLit(dq, sq string) string {
	lit := `"` + dq + `"`
	if sq != "" {
		// A single-quoted literal's \' is a quote, and a " in it needs no escape.
		sq = strings.NewReplacer(`\'`, `'`, `\"`, `"`).Replace(sq)
		lit = `"` + strings.ReplaceAll(sq, `"`, `\"`) + `"`
	}
	v, err := strconv.Unquote(lit)
	if err != nil {
		return dq + sq
	}
	return v
}

// samplers keep a sampler by expression source, up to maxSamplers: the same expressions recur
// across a package's scenarios (1,000 quickstarts judge one source 1,000 times), and a
// sampler's loads depend on its source alone.
var (
	samplers     sync.Map // string -> *loadSampler
	samplersMade atomic.Int32
	maxSamplers  = int32(1024)
)

func samplerOf(src string) *loadSampler {
	if ls, ok := samplers.Load(src); ok {
		return ls.(*loadSampler)
	}
	ls := newLoadSampler(src)
	if samplersMade.Add(1) <= maxSamplers {
		if prev, loaded := samplers.LoadOrStore(src, ls); loaded {
			return prev.(*loadSampler)
		}
	}
	return ls
}

// at is the i-th sample (i < n); its maps are the sampler's, shared by every caller.
func (ls *loadSampler) at(i int) schema.LoadResult {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.loads[0]
	for len(l.made) <= i {
		l.made = append(l.made, ls.finish(l.rng, len(l.made), ls.codesOf(l.rng, len(l.made))))
	}
	return l.made[i]
}

// fixed is the i-th sample (i < fixedLen(req)) of a load of exactly req requests; its maps
// are the sampler's, shared by every caller.
func (ls *loadSampler) fixed(i int, req float64) schema.LoadResult {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.loads[req]
	if l == nil {
		l = &loadList{rng: rand.New(rand.NewPCG(1, 2+uint64(req)))}
		if len(ls.loads) <= maxFixedLists {
			ls.loads[req] = l
		}
	}
	counts := ls.fixedCounts(req)
	for len(l.made) <= i {
		l.made = append(l.made, ls.finish(l.rng, len(l.made), ls.fixedCodesOf(l.rng, len(l.made), req, counts)))
	}
	return l.made[i]
}

// fixedCounts are the counts a code has in a load of req requests: those of the sampler
// below req, and 1, half, all but one and all of them.
func (ls *loadSampler) fixedCounts(req float64) []float64 {
	var out []float64
	for _, v := range append([]float64{req, 1, math.Floor(req / 2), req - 1}, ls.counts...) {
		if v >= 1 && v <= req && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// fixedLen is how many samples a load of req requests has.
func (ls *loadSampler) fixedLen(req float64) int {
	if req <= 0 {
		return ls.n
	}
	return 3 + len(ls.codes)*len(ls.fixedCounts(req)) + mixedLoads
}

// fixedCodesOf are the codes of the j-th sample of a load of req requests: all 200, all
// 503, half and half, then each code with each count, the rest under 200 (503 for 200's),
// then mixes of codes that add up to req.
func (ls *loadSampler) fixedCodesOf(rng *rand.Rand, j int, req float64, counts []float64) map[string]float64 {
	switch j {
	case 0:
		return map[string]float64{"200": req}
	case 1:
		return map[string]float64{"503": req}
	case 2:
		if h := math.Floor(req / 2); h >= 1 {
			return map[string]float64{"200": req - h, "503": h}
		}
		return map[string]float64{"-1": req}
	}
	j -= 3
	if j < len(ls.codes)*len(counts) {
		c, v := ls.codes[j/len(counts)], counts[j%len(counts)]
		m := map[string]float64{c: v}
		if v < req {
			other := "200"
			if c == other {
				other = "503"
			}
			m[other] = req - v
		}
		return m
	}
	// Cut req at random points among the codes drawn.
	var chosen []string
	for _, c := range ls.codes {
		if rng.IntN(2) == 0 {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		chosen = append(chosen, ls.codes[rng.IntN(len(ls.codes))])
	}
	cuts := []float64{0, req}
	for range len(chosen) - 1 {
		cuts = append(cuts, math.Floor(rng.Float64()*(req+1)))
	}
	slices.Sort(cuts)
	m := map[string]float64{}
	for k, c := range chosen {
		if v := min(cuts[k+1], req) - cuts[k]; v > 0 {
			m[c] = v
		}
	}
	return m
}

// codesOf are the codes of the j-th sample.
func (ls *loadSampler) codesOf(rng *rand.Rand, j int) map[string]float64 {
	switch j {
	case 0:
		return map[string]float64{}
	case 1:
		return map[string]float64{"200": 20}
	case 2:
		return map[string]float64{"503": 20}
	case 3:
		return map[string]float64{"200": 10, "503": 10}
	}
	j -= 4
	if j < len(ls.codes)*len(ls.counts) {
		return map[string]float64{ls.codes[j/len(ls.counts)]: ls.counts[j%len(ls.counts)]}
	}
	m := map[string]float64{}
	for _, c := range ls.codes {
		if rng.IntN(2) == 0 {
			m[c] = pick(rng, ls.counts)
		}
	}
	return m
}

func pick(rng *rand.Rand, xs []float64) float64 { return xs[rng.IntN(len(xs))] }

// stat is the value of the k-th stat an expression reads in its i-th sample: every stat 0,
// then 1, then each count (and, when it may be negative, its negation) by turns, the stats
// apart from one another — so two stats are judged alike and unlike. A delta of a counter is
// never negative when judged: a counter that went down fails the expectation as a reset, or,
// when allowReset lists it, its delta is what it counted since the reset (Delta).
func (ls *loadSampler) stat(i, k int) float64 {
	vals := ls.counts
	switch {
	case i == 0:
		return 0
	case i == 1:
		return 1
	}
	j := i*(k+1) + k*3
	v := vals[j%len(vals)]
	if (i+k)%5 == 0 {
		v = 0
	}
	return v
}

// series is the i-th sample of the k-th series an expression reads, with the stats it reads
// of it: 1 to 4 snapshots or as many as a number the expression writes or its neighbours, each stat drawn as stat draws it (in any order across samples:
// a counter reset between two ticks goes down) or absent (created later), taken every
// second from the start of the steps phase, or before it for a step of the setup phase.
func (ls *loadSampler) series(i, k int, stats []string, st *dsl.Step) schema.Series {
	n := ls.seriesLens[(i+k)%len(ls.seriesLens)]
	start := time.Unix(1e9, 0)
	first := start
	if st != nil && st.Phase == dsl.PhaseSetup {
		first = start.Add(-time.Duration(n+i%3) * time.Second)
	}
	ser := &schema.SeriesRecord{}
	for j := range n {
		smp := &schema.SnapshotRecord{At: first.Add(time.Duration(j) * time.Second), Counters: schema.Stats{}}
		for m, stat := range stats {
			if (i+j+m+k)%6 == 5 {
				continue // not yet created in this sample
			}
			smp.Counters[stat] = ls.stat(i+j*3, m+k*5)
			if schema.OnOff(stat) {
				smp.Counters[stat] = min(smp.Counters[stat], 1) // 0 or 1, as Envoy sets it
			}
		}
		ser.Samples = append(ser.Samples, smp)
	}
	return ser.SeriesFrom(start)
}

// resetTurn says whether the k-th stat of the i-th sample, a counter allowReset lists, is
// drawn as reset between its two snapshots (every other turn of its values).
func (ls *loadSampler) resetTurn(i, k int) bool {
	j := i*(k+1) + k*3
	return (j/len(ls.counts))%2 == 1
}

// finish makes the j-th load of a list, of codes: fortio's sums, latencies in order, the other
// numbers drawn. Every third load has one latency throughout, each of the reals in turn (the
// numbers the source writes and their neighbours first): six
// drawn and sorted, a p50 above most of them (f.p50 <= 1000, with 3 of 14 reals above 1000)
// was drawn about once in 500 loads, and a bound on it read as one that cannot fail.
func (ls *loadSampler) finish(rng *rand.Rand, j int, codes map[string]float64) schema.LoadResult {
	l := schema.LoadResult{Codes: codes}
	l.Recount()
	lat := make([]float64, 6)
	if l.Requests > 0 {
		for i := range lat {
			lat[i] = pick(rng, ls.reals)
		}
		if j%3 == 2 {
			for i := range lat {
				lat[i] = ls.reals[len(ls.reals)-1-(j/3)%len(ls.reals)] // the numbers src writes first
			}
		}
		slices.Sort(lat)
	}
	l.Min, l.P50, l.P90, l.P99, l.P999, l.Max = lat[0], lat[1], lat[2], lat[3], lat[4], lat[5]
	l.Avg = l.Min + (l.Max-l.Min)*rng.Float64()
	l.IPs = map[string]float64{}
	if l.Requests > 0 {
		l.Sockets, l.Connections = pick(rng, ls.counts), pick(rng, ls.counts)
		l.QPS, l.DurationS = pick(rng, ls.reals), pick(rng, ls.reals)
		for _, ip := range ls.ips {
			if rng.IntN(2) == 0 {
				l.IPs[ip] = pick(rng, ls.counts)
			}
		}
	}
	return l
}

// log is a log a logs step could record, for the i-th judging of an expression: the access
// lines of the j-th load sample's codes (a socket error has no line), none, one or many
// lines besides them, and each flag and details value the expression reads on none, one,
// some, all but one or every access line (lines with no other flag flagged "-"; the details
// of the rest "via_upstream" or none). Its lines, entries and captures are not drawn: an
// expression reading them is not judged.
func (ls *loadSampler) log(j, i int) schema.LogResult {
	l := schema.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}}
	access := 0.0
	for c, v := range ls.at(j).Codes {
		if c != "-1" {
			l.Codes[c] = v
			access += v
		}
	}
	l.Count = access + []float64{0, 1, ls.counts[i%len(ls.counts)]}[i%3]
	share := func(k int, of float64) float64 {
		switch (i + k) % 5 {
		case 0:
			return 0
		case 1:
			return of
		case 2:
			return min(1, of)
		case 3:
			return math.Floor(of / 2)
		}
		return max(of-1, 0)
	}
	most := 0.0
	for k, f := range ls.flags {
		if f == "-" {
			continue
		}
		if v := share(k, access); v > 0 {
			l.Flags[f] = v
			most = max(most, v)
		}
	}
	if access > most {
		l.Flags["-"] = access - most
	}
	left := access
	for k, d := range ls.details {
		if v := share(k+1, left); v > 0 {
			l.Details[d] += v
			left -= v
		}
	}
	if left > 0 && i%2 == 0 {
		l.Details["via_upstream"] += left
	}
	return l
}

// sampledOutcomes are the outcomes a step's outcome.<step> can read at the end of the run;
// midRunOutcomes during it.
var (
	sampledOutcomes = []string{dsl.OutcomePassed, dsl.OutcomeFailed, dsl.OutcomeError, dsl.OutcomeSkipped, dsl.OutcomeInterrupted}
	midRunOutcomes  = append(slices.Clone(sampledOutcomes), dsl.OutcomeRunning, dsl.OutcomePending)
)

// outcome is the k-th step's outcome, among set, and error in the i-th sample: every outcome
// of the first steps in turn (all their combinations first: div is the product of the sizes
// of the sets before k's); the error empty for a step that was skipped or is running, empty
// for one that passed without expectFail, empty or a string src writes for one that passed
// with it (the error it expected), an error of its kind or a string src writes for one that
// did not.
func (ls *loadSampler) outcome(i, k, div int, set []string, expectFail bool) (string, string) {
	o := set[(i/div+k)%len(set)]
	outs := ls.outputs()
	str := outs[(i/len(set)+k)%len(outs)]
	switch o {
	case dsl.OutcomePassed:
		if len(set) == 1 && !expectFail {
			return o, "" // a step without expectFail passes with no error
		}
		return o, []string{"", str}[i%2]
	case dsl.OutcomeRunning, dsl.OutcomePending:
		return o, ""
	case dsl.OutcomeSkipped:
		return o, ""
	case dsl.OutcomeInterrupted:
		return o, "interrupted"
	}
	return o, []string{"exited with code 1, expected 0; stderr: (empty)", "assert failed", str}[i%3]
}

// exec is the k-th command's result in the i-th sample: its exit code and output drawn from
// the exits and outputs.
func (ls *loadSampler) exec(i, k int) schema.ExecResult {
	outs := ls.outputs()
	return schema.ExecResult{
		Exit:   ls.exits[(i+k)%len(ls.exits)],
		Stdout: outs[(i/len(ls.exits)+k)%len(outs)],
		Stderr: outs[(i/2+k)%len(outs)],
	}
}
