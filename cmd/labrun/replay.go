package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

func newReplayCmd(p *process) *cobra.Command {
	var output, file string
	cmd := &cobra.Command{
		Use:   "replay RUN.json",
		Short: "Re-judge a recorded run with the scenario's expectations as they are now",
		Long: `replay reads the JSON record of a run (written next to its report) and judges the
scenario's expectations again over what the run recorded — snapshots, load results, captures,
logs — without any cluster. The scenario is read from the file the run recorded (or --file),
as it is now: edit an expectation and replay to see its verdict on the same data.

Only the expectations are judged again; the rest of the run's verdict stays. A run that did
not pass for another reason than its expectations — a failed assert, wait or repeat, a step
that erred or timed out (in the cleanup too), an interrupt, a refusal — replays with the
run's outcome and exit code, and the reason the run gave; a run that left objects or
processes behind still exits 4 (a record whose leftovers and cleanup lines disagree is
refused, exit 2). A run whose steps all ended passes or fails by the
expectations as they are now.

The steps must be the ones the run ran: replay refuses (exit 2), naming the first step that
differs, a scenario whose steps differ from the record's (kind, name, what the step does,
a step added), since the recorded data says nothing about other steps. It also refuses (exit
2) a record that contradicts itself — one that keeps what only a later version than its own
writes (its version lowered, to be held to fewer checks), a load whose codes do not sum to its
requests, whose ok and errors are not its codes', whose latencies are out of order, whose qps is not its
requests over its duration, whose addresses outnumber its sockets and connections; a logs
result whose codes,
flags, details, count or captures are not those of its lines; a step that passed with an
error, failed without one, or ends before it starts or after the run; a steps phase that
starts (stepsStart) before a setup step ends or after a step of its own starts; a process step
whose process ended early in a run that is not an error; a step that ran a load and is shorter
than the load's duration or does not hold its start and end, a snapshot taken outside its
step's span; a snapshot of the local backend whose rq_Nxx is not the sum of its rq_<code>
of class N, whose http.downstream_ stat is not the stat it names, whose counter is lower
than in a snapshot of the same backend whose step ended before its step started, or whose
rq_active (cx_active) is higher than the rq_total (cx_total) of one whose step started after
its step ended — as edited or corrupt.
So is a step that passed after lasting longer than its timeout, one of the setup or steps
that passed or failed after the scenario's timeout expired, one that failed as its
expectFail expected with an error its pattern does not match, or one with at: planned
elsewhere than its block's start plus its at; when the scenario is not the source the run
had (--file, or its file edited since), replay says the record and the scenario disagree.

Each assert step is judged again too, when the record holds exactly what it read: every step
its expression reads (a result, outcome or error, the snapshots of delta, started or ended)
had ended before the assert started, or started after it ended, in all its runs, and it does
not call now(). An assert whose recorded outcome the expression contradicts over those data
(passed where it is false, failed where it is true) is refused (exit 2) as edited or corrupt.
An assert that read a step still running, or one that ran again after it, is left as
recorded. A wait until that passed and reads sampled series is judged over each prefix of
them a poll could have seen: one that holds over none was not the run's (exit 2).

An expectation that calls now() is not judged again (replay's clock is not the run's): it
keeps the outcome the record gives it, and a note says so; but one whose now() is in a side
of && or || that a left side calling no now() decides reads no time, and is judged again as
any other.

A run writes a seal last (records of version 8 on): seal.sha256 in the record's folder, the
SHA-256 of the record and of every file of the folder. After the other checks, replay refuses
(exit 2) a record whose record or files differ from its seal, naming the first that differs,
or whose folder holds no seal: a record edited together with its artifacts, consistently,
differs from it. The seal guards against hand edits and corruption; an edit that computes it
again is not told from the run's (it is not a signature).

A result parsed from a raw artifact the run wrote beside the record (in the folder named as
the record without .json) must be what that artifact gives, parsed again: a config step's
value (its config dumps), a logs step's lines and counts (logs.txt), a snapshot's stats (its
stats text, Prometheus text, clusters JSON; each sample of a series, its own), a load's results (fortio.json), an exec's stdout
and stderr. A result that
differs is refused (exit 2) as edited or corrupt, naming the step, the artifact and the first
value that differs; a record whose folder lacks an artifact the record lists is refused
too; a record whose folder is not beside it is judged from the record alone, and a warning
and its verdict line say so ("PASSED s in 1s — unverified: judged from the record alone, …";
the exit code is the verdict's: the expectations hold over the record's data, which nothing
held to what the run wrote). So does the verdict line of a record of an older version than
this labrun writes, held to fewer checks. With
--file (or a file edited since the run) the artifacts are parsed with the steps as the
scenario has them now: a result they would not give (a logs step's match changed) is refused
as a disagreement of the record and the scenario.

An expectation whose expression is the one the record judged (and does not call now()) reads
the same values from the record's data as the run did (they were written together): a value that differs (its
vars, its data or the recorded value edited) is refused (exit 2) as edited or corrupt. So is a
record whose vars make the scenario, its source unchanged since the run, one labrun refuses (a
var edited to a value of another type, or so that an expectation cannot fail, or added) where
its own vars do not: labrun refuses such a run before it starts, so no run had those vars.
A record keeps which vars the command line gave its run (givenVars: --var, a sweep's
combination); one whose other vars are not what its source, unchanged since the run, gives
them is refused (exit 2) as edited; so is a run of a matrix whose vars are not its unit's
combination (or the --var its matrix fixes), whose unit is not its matrix's, or whose matrix,
its source unchanged, does not sweep what the scenario declares. A record of an older version
does not say which were given:
its verdict line names its vars that are not the scenario's own ("— unverified: its vars
word=no (the source gives yes) are not the scenario's own, …").`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, sc, unverified, err := p.recordAndScenario(args[0], file)
			if err != nil {
				return err
			}
			if rec.Version < interp.RecordVersion {
				// A record of an older version is held to its version's checks: fewer (no
				// exit.txt before 4, no fileDigests before 3, …). One whose version was
				// lowered and stripped of all a later version writes reads as one, so the
				// verdict says which checks it was held to.
				older := fmt.Sprintf("a record of version %d, held to fewer checks than one of version %d", rec.Version, interp.RecordVersion)
				unverified = strings.Join(slices.DeleteFunc([]string{unverified, older}, func(s string) bool { return s == "" }), "; ")
			}
			// A scenario that is not the source the run had (its file edited since, or
			// --file) judges the run's data by other expectations than the run's: the
			// verdict line says so where "PASSED" is read. Before, a failed run's record
			// replayed "PASSED s" with its expectation edited in the file, and nothing said
			// that the verdict was not the run's scenario's.
			changed := p.changedSince(rec, sc, or(file, rec.File))
			judged := interp.Rejudge(rec, sc)
			verdict, why := interp.Verdict(rec, judged)
			replayed := *rec
			replayed.Expectations = judged
			replayed.Outcome = verdict
			replayed.Error = why
			if machine(output) {
				doc := map[string]any{"scenario": rec.Scenario, "outcome": verdict, "expectations": judged, "notes": rec.Notes}
				if why != "" {
					doc["error"] = why
				}
				if len(rec.Leftovers) > 0 {
					doc["leftovers"] = rec.Leftovers
				}
				if unverified != "" {
					doc["unverified"] = unverified
				}
				if changed != "" {
					doc["scenarioChanged"] = changed
				}
				p.printDoc(output, doc)
			} else {
				fmt.Fprintf(p.Stdout, "replay of %s (recorded %s, outcome then: %s)\n", rec.Scenario, rec.Start.UTC().Format("2006-01-02 15:04:05 UTC"), rec.Outcome)
				// A record whose artifacts are not beside it was judged from the record alone:
				// the verdict line says so, where whoever reads "PASSED" reads it (a warning on
				// stderr is easily lost in a CI log).
				if unverified != "" {
					unverified = "unverified: " + unverified
				}
				if changed != "" {
					unverified = strings.Join(slices.DeleteFunc([]string{changed, unverified}, func(s string) bool { return s == "" }), "; ")
				}
				p.printVerdict(&replayed, unverified, false)
			}
			if c := exitCode(&replayed); c != exitOK {
				return &exitError{code: c}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().StringVar(&file, "file", "", "the scenario file (default: the one the run recorded)")
	return cmd
}

// changedSince says, in the verdict line's words, that file, which replay judged rec by, is
// not the source rec's run had: "" when it is, or when the record keeps no source (a record
// of version 1: its verdict line says it is held to fewer checks).
func (p *process) changedSince(rec *interp.Record, sc *dsl.Scenario, file string) string {
	if rec.Source == "" || p.sources.of(inCwd(p.Cwd, file)) == rec.Source {
		return ""
	}
	// Its steps are the record's (ChangedStep), which says nothing of the run's: a record
	// edited with its scenario (a failed step taken out of both) has them too.
	what := ""
	if !sameExpectations(rec, sc) {
		what = ": expectations other than the run's"
	}
	return fmt.Sprintf("judged by %s as it is now, not the source the run had (edited since the run, or --file)%s", relPath(p.Cwd, file), what)
}

// recordAndScenario reads a run's record and loads its scenario as it is now (from file, else
// the file the run recorded), with the vars the run had; a scenario whose steps differ from
// the recorded ones is refused (exit 2). unverified, when the folder of the record's artifacts
// is not beside it, says that its results are not held to them (the verdict line's words).
func (p *process) recordAndScenario(path, file string) (_ *interp.Record, _ *dsl.Scenario, unverified string, _ error) {
	rec, err := report.Read(path)
	if err != nil {
		return nil, nil, "", &exitError{exitInvalid, err.Error()}
	}
	// A record whose outcome disagrees with its own verdicts was edited (merge refuses it
	// alike): replay would judge the expectations again and say the data's verdict of a
	// record that says one of its claims failed.
	if msg := contradiction(rec); msg != "" {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s; a record that disagrees with itself was edited or damaged", path, msg)}
	}
	if file == "" {
		file = rec.File
	}
	vars := map[string]string{}
	for k, v := range rec.Vars {
		vars[k] = dsl.Stringify(v)
	}
	// The checks that depend on the target judge the scenario as on the run's target: a
	// scenario run with --target kube is not refused for the local target's limits.
	opts := dsl.Options{Vars: vars, Target: rec.Target, Selected: func(name string, _ []string) bool { return name == rec.Scenario }}
	// The run's own cluster judged its Istio kinds by its CRDs (a newer Istio than vet knows
	// may serve a field 1.30.8's CRDs have not): replay, which has no cluster, takes its
	// judgement rather than refuse the record's scenario (a step changed since is ChangedStep's).
	opts.IstioByCluster = true
	// The load's warnings are printed once the secrets its source holds are hidden (loadOwn).
	var warnings bytes.Buffer
	res, errs, err := p.loadTo(&warnings, []string{file}, opts)
	var hide *interp.Redactor // the secrets the source writes out (ChangedStep)
	if refused := err != nil || len(errs) > 0; refused || declaresSecrets(res) {
		own, ownOK := p.loadOwn(file, opts)
		hide = ownRedactor(own, rec.Scenario)
		if msg := p.refusedVars(file, rec, vars, refusals(errs, err), own, ownOK); msg != "" {
			return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s", path, msg)}
		}
	}
	io.Copy(p.Stderr, &warnings)
	if err != nil {
		return nil, nil, "", loadError(err)
	}
	if len(errs) > 0 {
		return nil, nil, "", p.reportVet("text", res, errs)
	}
	var sc *dsl.Scenario
	for _, s := range res.Scenarios {
		if s.Name == rec.Scenario {
			sc = s
		}
	}
	if sc == nil {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s declares no scenario %q any more", file, rec.Scenario)}
	}
	if err := interp.RestoreTypes(rec); err != nil {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %v", path, err)}
	}
	if diff := interp.ChangedStep(rec, sc, hide); diff != "" {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: the steps of %s in %s differ from those the run recorded: %s; the record holds the data of the steps that ran, which says nothing about other steps: run the scenario again", path, rec.Scenario, file, diff)}
	}
	check := interp.OutcomeContradictions
	sameSource := rec.Source != "" && p.sources.of(inCwd(p.Cwd, file)) == rec.Source
	if rec.Source != "" && !sameSource {
		// Another scenario than the run's (--file, or its file edited since): where it
		// and the record disagree, either may have changed.
		check = func(rec *interp.Record, sc *dsl.Scenario) error {
			return interp.ScenarioDisagreements(rec, sc, relPath(p.Cwd, file))
		}
	}
	if err := check(rec, sc); err != nil {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %v", path, err)}
	}
	// The run's unit is its matrix's, and, from the source the run had, that matrix is the
	// sweep the scenario declares with the flags the record keeps (merge's check). Before,
	// replay did not look: a sweep run's var and combination edited together (limit 5 made 20,
	// a value the scenario does not sweep, its id left at limit=5) replayed PASSED.
	var declared *dsl.Scenario
	if sameSource {
		declared = sc
	}
	cp := *rec // a record without a unit is a single run's (unitOrSingle gives it one)
	if cs := unitOrSingle(&cp).Contradictions(declared); len(cs) > 0 {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s: %s; the record was changed after the run or is corrupt", path, matrixNotDeclared, strings.Join(cs, "; "))}
	}
	// The results parsed from the artifacts beside the record are what those give, parsed with
	// the steps as sc has them. Another scenario than the run's (--file, or its file edited
	// since) may parse them otherwise - a logs step's match or capture is not in what the step
	// does (its summary, ChangedStep) - and then the record's results are not what sc's step
	// would have recorded: judging them would judge another step's data. Before, such a
	// scenario skipped the check: a record edited into a pass replayed PASSED with --file of
	// its scenario plus a comment, and a logs step's match changed from what the run counted
	// to " 503 " judged "no 503" over the count of other lines while logs.txt held a 503.
	ra := readRecordArtifacts(rec, path)
	if ra.problem != "" {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", path, ra.problem)}
	}
	fmt.Fprint(p.Stderr, ra.warning)
	if cs := interp.ArtifactContradictions(rec, sc, ra.data); len(cs) > 0 {
		if sameSource {
			return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", path, strings.Join(cs, "; "))}
		}
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s; the record and %s disagree: a step of the scenario reads the run's artifacts otherwise than the run did (its match, capture, path or cluster changed since the run), or the record was changed after the run; run the scenario again", path, strings.Join(cs, "; "), relPath(p.Cwd, file))}
	}
	cp = *rec // Rejudge adds its notes to the record it judges
	judged := interp.Rejudge(&cp, sc)
	if cs := append(interp.ValueContradictions(rec.Expectations, judged, hide), interp.UnrecordedVarReads(rec, judged, hide)...); len(cs) > 0 {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s\nlabrun: the values an expectation recorded are those its expression read from the run's data, written together: a record where they differ was edited or damaged (its vars or data, or the values themselves)", path, strings.Join(cs, "\nlabrun: "+path+": "))}
	}
	if sameSource {
		if msg := p.varsNotGiven(file, rec); msg != "" {
			return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s", path, msg)}
		}
		if cs := interp.WarningAbsences(rec, sc); len(cs) > 0 {
			return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", path, strings.Join(cs, "; "))}
		}
	}
	// The seal last: a record edited so that it contradicts itself, its artifacts or its
	// scenario is refused above, saying where; one edited consistently with all of them
	// (a record and its artifact edited together) differs from its seal.
	if msg := report.SealProblem(path, rec, nil); msg != "" {
		return nil, nil, "", &exitError{exitInvalid, fmt.Sprintf("%s: %s", path, msg)}
	}
	unverified = ra.unverified
	if sameSource {
		if why := p.varsUnsaid(file, rec); why != "" {
			unverified = strings.Join(slices.DeleteFunc([]string{unverified, why}, func(s string) bool { return s == "" }), "; ")
		}
	}
	return rec, sc, unverified, nil
}

// declaresSecrets says whether a scenario res holds declares secret vars.
func declaresSecrets(res *dsl.Result) bool {
	return res != nil && slices.ContainsFunc(res.Scenarios, func(s *dsl.Scenario) bool { return len(s.Secrets) > 0 })
}

// loadOwn loads file as opts says but with the scenario's own vars (its defaults), and hides,
// in all that labrun prints from now on, the values of the secret vars that its scenarios'
// source holds (interp.SourceRedactor). replay, mutate and merge load a scenario with the vars
// a record keeps, where a secret's value is its redaction, and printed as it is what the
// source writes out itself: an expectation or a step that holds the secret's value (replay's
// verdict lines and JSON, mutate's killers, merge's refusals, the step that differs from the
// record's, a problem of the scenario as it is now), the default of a var the record does not
// keep. ok: it loads with no problem.
func (p *process) loadOwn(file string, opts dsl.Options) (res *dsl.Result, ok bool) {
	opts.Vars = nil
	opts.Partial = true // a scenario with problems declares its secrets too
	res, errs, err := p.loadTo(io.Discard, []string{file}, opts)
	if res != nil {
		for _, s := range slices.Concat(res.Scenarios, res.Partial) {
			p.secrets.addBase(interp.SourceRedactor(s))
		}
	}
	return res, err == nil && len(errs) == 0
}

// ownRedactor is the interp.SourceRedactor of the scenario named name that res holds (loadOwn),
// or nil.
func ownRedactor(res *dsl.Result, name string) *interp.Redactor {
	if res == nil {
		return nil
	}
	for _, s := range slices.Concat(res.Scenarios, res.Partial) {
		if s.Name == name {
			return interp.SourceRedactor(s)
		}
	}
	return nil
}

// refusals is what labrun says of a load it refused: its problems (errs), or err when it is a
// refusal (a --var no scenario declares), not an error of the machine (a file unreadable).
func refusals(errs dsl.Errors, err error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitInvalid && ee.msg != "" {
		out = append(out, strings.Split(ee.msg, "\n")...)
	}
	return out
}

// refusedVars is why the vars a record keeps are no run's, or "" when they may be: file is the
// source the record ran (the same hash) and loads with its own vars (own, ownOK), but not with
// the record's (vars: labrun refused it, saying problems). labrun refuses such a run before it
// starts, so the record was edited: a var edited so that a claim cannot fail (a failed run's
// maxShed edited from 0 to 100: its expectation became one vet's vacuity check refuses), to
// a value of another type, or a var added. replay said the problem alone, as if the scenario
// were wrong; merge counted the record as recorded (dc19295). A record whose vars hold a
// secret's redaction says nothing so: those are not the values the run had. merge, replay and
// mutate say it in these words.
func (p *process) refusedVars(file string, rec *interp.Record, vars map[string]string, problems []string, own *dsl.Result, ownOK bool) string {
	if !ownOK || len(vars) == 0 || len(problems) == 0 || rec.Source == "" || p.sources.of(inCwd(p.Cwd, file)) != rec.Source {
		return ""
	}
	if slices.ContainsFunc(slices.Collect(maps.Values(vars)), func(v string) bool { return strings.HasPrefix(v, "[secret ") }) {
		return ""
	}
	var declared map[string]any
	for _, s := range own.Scenarios {
		if s.Name == rec.Scenario {
			declared = s.Vars
		}
	}
	// The vars the record keeps that are not the scenario's own (a sweep's, --var's, or
	// edited), else all of them.
	var names, all []string
	for k, v := range vars {
		all = append(all, k+"="+v)
		if d, ok := declared[k]; !ok || dsl.Stringify(d) != v {
			names = append(names, k+"="+v)
		}
	}
	if len(names) == 0 {
		names = all
	}
	sort.Strings(names)
	return fmt.Sprintf("the record's vars (%s) make scenario %s, the source it ran, one labrun refuses to run (%s), where its own vars do not: labrun refuses such a run before it starts, so no run had these vars; the record was edited",
		strings.Join(names, ", "), rec.Scenario, strings.Join(problems, "; "))
}

// ungivenVars are the vars of rec that no one gave the run and that are not what file, the
// source the record ran, computes ("name=value (the source gives other)", sorted): the record
// keeps each var, given (--var, a sweep's combination: given, Record.GivenVars, or, in a record
// made before those were kept, its unit's combination alone) or the scenario's own. file is
// loaded with the given ones alone, as a run with them: a var derived from a given one (b:
// vars.a*2) is the source's doing too. Nil when it cannot tell: the source does not load so,
// or a given var holds a secret's redaction (not the value the run had).
func (p *process) ungivenVars(file string, rec *interp.Record, given []string) []string {
	ungiven := false
	for k := range rec.Vars {
		ungiven = ungiven || !slices.Contains(given, k)
	}
	if !ungiven {
		return nil // every var was given, or there is none: no need to load the source again
	}
	vars := map[string]string{}
	for _, k := range given {
		v, ok := rec.Vars[k]
		if !ok {
			continue
		}
		s := dsl.Stringify(v)
		if strings.HasPrefix(s, "[secret ") {
			return nil
		}
		vars[k] = s
	}
	opts := dsl.Options{Vars: vars, Target: rec.Target, Selected: func(name string, _ []string) bool { return name == rec.Scenario }, IstioByCluster: true}
	res, errs, err := p.loadTo(io.Discard, []string{file}, opts)
	if err != nil || len(errs) > 0 || res == nil {
		return nil
	}
	var sc *dsl.Scenario
	for _, s := range res.Scenarios {
		if s.Name == rec.Scenario {
			sc = s
		}
	}
	if sc == nil {
		return nil
	}
	var out []string
	for k, v := range rec.Vars {
		if _, ok := vars[k]; ok || slices.Contains(sc.Secrets, k) || strings.Contains(dsl.Stringify(v), "[secret ") {
			continue // a value that holds a secret's is kept redacted: not the value the run had
		}
		own, ok := sc.Vars[k]
		if !ok {
			continue // the load refuses a var the scenario does not declare (refusedVars)
		}
		if got, want := dsl.Stringify(v), dsl.Stringify(own); got != want {
			out = append(out, fmt.Sprintf("%s=%s (the source gives %s)", k, got, want))
		}
	}
	sort.Strings(out)
	return out
}

// givenOf are the names of the vars the command line gave rec's run as far as the record
// says: GivenVars in a record of version 6 on; before, its unit's combination alone (a --var
// was not kept).
func givenOf(rec *interp.Record) []string {
	if rec.Version >= 6 {
		return rec.GivenVars
	}
	if rec.Unit != nil {
		return slices.Sorted(maps.Keys(rec.Unit.Vars))
	}
	return nil
}

// varsNotGiven is why a record's vars are no run's ("" when they may be): in a record of
// version 6 on, whose source file is, a var that none gave (GivenVars) and that the source
// computes otherwise was edited after the run. merge, replay and mutate say it in these words.
func (p *process) varsNotGiven(file string, rec *interp.Record) string {
	if rec.Version < 6 {
		return ""
	}
	diff := p.ungivenVars(file, rec, rec.GivenVars)
	if len(diff) == 0 {
		return ""
	}
	given := "none was given"
	if len(rec.GivenVars) > 0 {
		given = "those given were " + strings.Join(rec.GivenVars, ", ")
	}
	return fmt.Sprintf("the record's vars %s are not the scenario's own, and the record says no --var or sweep gave them (%s): a run keeps the vars its scenario had, so the record was edited after the run",
		strings.Join(diff, ", "), given)
}

// varsUnsaid qualifies a record made before the run kept which vars it was given (version 5
// and older): its vars that are not the scenario's own may have been given by --var, or
// edited; "" when none differs.
func (p *process) varsUnsaid(file string, rec *interp.Record) string {
	if rec.Version >= 6 {
		return ""
	}
	diff := p.ungivenVars(file, rec, givenOf(rec))
	if len(diff) == 0 {
		return ""
	}
	return fmt.Sprintf("its vars %s are not the scenario's own, and a record of version %d does not say that --var gave them", strings.Join(diff, ", "), rec.Version)
}
