package interp

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// RestoreTypes gives a record read from JSON the Go types expressions expect where JSON lost
// them (the target's endpoints).
func RestoreTypes(rec *Record) error {
	for _, k := range []string{"backends", "blackholes"} {
		v, ok := rec.TargetValues[k]
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var m map[string]schema.Endpoint
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		rec.TargetValues[k] = m
	}
	return nil
}

// Verdict is the verdict of a replay, and why when it is not a pass. A replay judges the
// expectations again, and only them: everything else the run decided stays. A run that did
// not reach its verdict on its expectations (interrupted, refused, an error, a timeout, a
// failed assert, wait or repeat), a step that failed or erred without a mayFail or expectFail
// that allowed it (in a cleanup too), keep the run's outcome and the reason the run gave; a
// run whose steps all ended passes or fails by the expectations judged now.
func Verdict(rec *Record, judged []*Judgement) (Outcome, string) {
	switch rec.Outcome {
	case Passed, Failed:
		if rec.Error != "" {
			// The run stopped at a step that failed (assert, wait, repeat): its expectations
			// were never judged, and no expectation can make that run pass.
			return Failed, rec.Error
		}
	case Interrupted:
		why := "the run was interrupted: it did not reach its end"
		if _, cleanup, ok := strings.Cut(rec.Error, "; cleanup: "); ok {
			// Its cleanup failed, or a second interrupt abandoned it: the run said so.
			why += "; cleanup: " + cleanup
		}
		return Interrupted, why
	case Errored, TimedOut, Refused:
		return rec.Outcome, or(rec.Error, "the run's outcome was "+string(rec.Outcome))
	default:
		return Errored, fmt.Sprintf("the record's outcome %q is not one a run has", rec.Outcome)
	}
	if sr := failedStep(rec); sr != nil {
		out := sr.Outcome
		switch out {
		case Failed, TimedOut, Interrupted:
		default:
			out = Errored
		}
		why := fmt.Sprintf("step %s (%s) %s", stepName(sr), sr.Kind, outcomeWord(sr.Outcome))
		if sr.Error != "" {
			why += ": " + sr.Error
		}
		if sr.Phase == dsl.PhaseCleanup {
			why = "cleanup: " + why
		}
		return out, why
	}
	for _, j := range judged {
		if j.Outcome == Failed || j.Outcome == Errored {
			return Failed, ""
		}
	}
	return Passed, ""
}

// failedStep is the first step the record says did not pass, other than those a mayFail or
// an expectFail allowed (on the step or a block that holds it) and those of the catch phase
// (which runs after a failure, and whose own errors never change a run's verdict); nil when
// there is none.
func failedStep(rec *Record) *StepRecord {
	allowed := map[string]bool{}
	for _, sr := range rec.Steps {
		if sr.ExpectedError != "" || slices.Contains(sr.Warnings, MayFailWarning) {
			allowed[sr.Path] = true
		}
	}
	for _, sr := range rec.Steps {
		if sr.Outcome == Passed || sr.Phase == dsl.PhaseCatch {
			continue
		}
		ok := false
		for p := sr.Path; p != "" && !ok; p = parentPath(p) {
			ok = allowed[p]
		}
		if !ok {
			return sr
		}
	}
	return nil
}

// parentPath is the path of the block that holds the step at path ("steps.2.parallel.1" →
// "steps.2"), "" for a step of a phase.
func parentPath(path string) string {
	parts := strings.Split(path, ".")
	if len(parts) <= 2 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], ".")
}

// stepName is what a step record is called in a message: its name, its block's label, or its
// path.
func stepName(sr *StepRecord) string {
	return or(sr.Name, or(sr.Label, sr.Path))
}

// outcomeWord says a step's outcome as a verb phrase.
func outcomeWord(o Outcome) string {
	switch o {
	case Failed:
		return "failed"
	case Errored:
		return "erred"
	case TimedOut:
		return "timed out"
	case Cancelled:
		return "was cancelled"
	case Interrupted:
		return "was interrupted"
	}
	return fmt.Sprintf("ended %q", o)
}

// ChangedStep names the first step of sc that differs from the steps rec recorded, and how
// ("" when none does): a step the record holds that sc has no more, or of another kind or
// name, or whose summary (what it does: the URL, the requests, the command…) is not what the
// run recorded, or whose parameters are not those the record keeps (Record.StepParams: what
// a summary leaves out, a logs step's match, a config step's filters; records made before
// they were kept are compared by their summaries alone); or a step of sc that the run would
// have run (it reached the end of its steps) and that the record does not hold. Judging the
// data of other steps would prove nothing about these. A step with ${...} is compared as the
// run resolved it, or, when that cannot be done again, with each ${...} standing for any
// text; its parameters as written. Before the parameters were kept, a logs step whose match
// was changed from " 599 " to " 503 " replayed (with --file, its artifacts not beside the
// record) "the backend logged no 503" as PASSED over the run's count of other lines.
//
// source hides the values of secrets that the scenario's source writes out itself
// (SourceRedactor of it loaded with its own vars; nil: none): sc is loaded with the record's
// vars, where a secret's value is its mask, so a step that writes the value out ("echo
// token=s3cr3t") is compared hidden as the run's record hid it. Before, replay refused the
// untouched record of such a run: its step "ran \"sh -c echo token=[secret token]\" and would
// now run \"sh -c echo token=s3cr3t\"". The step as sc says it is tried first: a run given
// another value than the source's writes the source's out as it is.
func ChangedStep(rec *Record, sc *dsl.Scenario, source *Redactor) string {
	if msg := changedSteps(rec, sc, source); msg != "" {
		return msg
	}
	return changedClusters(rec, sc)
}

// changedSteps is ChangedStep of the steps alone.
func changedSteps(rec *Record, sc *dsl.Scenario, source *Redactor) string {
	steps := map[string]*dsl.Step{}
	var order []*dsl.Step
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			steps[s.Path] = s
			order = append(order, s)
		})
	}
	redact := NewRedactor(sc)
	hidden := JoinRedactors(redact, source)
	env := NewJudge(rec, sc).Env()
	seen := map[string]bool{}
	for _, sr := range rec.Steps {
		s := steps[sr.Path]
		if s != nil && sc.ClusterOf(s) != sr.Cluster {
			// Of a step that names no cluster, the first of clusters: (its options say
			// nothing of it): clusters: reordered sent it to another cluster, and replayed
			// PASSED over the data of the one it ran on. Every run of it: a repeat's round
			// edited to another cluster went unseen.
			return fmt.Sprintf("%s ran %s and would now run %s", recordedStep(sr), inCluster(sr.Cluster, nil), inCluster(sc.ClusterOf(s), s))
		}
		if seen[sr.Path] {
			continue
		}
		seen[sr.Path] = true
		switch {
		case s == nil:
			return fmt.Sprintf("%s is in the record but not in the scenario", recordedStep(sr))
		case s.Kind != sr.Kind:
			return fmt.Sprintf("%s is a %s step now", recordedStep(sr), s.Kind)
		case s.Name != sr.Name:
			return fmt.Sprintf("%s is named %q now", recordedStep(sr), s.Name)
		}
		// A block's summary counts its steps, which are compared one by one.
		if _, block := s.Params.(interface{ SetChildren(int) }); !block {
			if now, ok := sameSummary(s, sr.Summary, env, redact, rec.Vars); !ok {
				if now, ok = sameSummary(s, sr.Summary, env, hidden, rec.Vars); !ok {
					return fmt.Sprintf("%s ran %q and would now run %q", recordedStep(sr), sr.Summary, now)
				}
			}
		}
		switch {
		case rec.StepParams != nil:
			if why := changedParams(s, rec.StepParams[sr.Path], redact, hidden); why != "" {
				return recordedStep(sr) + " " + why
			}
		case rec.Version >= 3:
			// A run of a version that keeps them keeps those of every step that has any:
			// none at all is a record whose stepParams were taken out, not an old one.
			if p, err := stepParams(s, redact); err == nil && p != nil {
				return recordedStep(sr) + " is in a record of version " + fmt.Sprint(rec.Version) + " without stepParams, which a run of that version keeps of every step: the record was changed after the run or is corrupt"
			}
		}
		if rec.Version >= 3 {
			if why := changedOptions(s, rec.StepOptions[sr.Path], redact, hidden); why != "" {
				return recordedStep(sr) + " " + why
			}
		}
		if why := changedFiles(rec, s, sr, sc.Dir, env, true); why != "" {
			return recordedStep(sr) + " " + why
		}
	}
	// A run that reached the end of its steps ran every step of its setup and steps phases
	// but the samplers (whose while step may end before their first tick) and the rest of a
	// block that a mayFail or expectFail let fail. The catch phase runs only after a
	// failure; the cleanup is left out (records of runs before every cleanup step ran whatever
	// an earlier one did lack those after its first failure).
	ended := (rec.Outcome == Passed || rec.Outcome == Failed) && rec.Error == "" || strings.HasPrefix(rec.Error, "cleanup: ")
	if !ended {
		return ""
	}
	stopped := map[string]bool{}
	for _, sr := range rec.Steps {
		if sr.Outcome != Passed || sr.ExpectedError != "" {
			stopped[sr.Path] = true
		}
	}
	for _, s := range order {
		if seen[s.Path] || s.Every > 0 || s.Phase == dsl.PhaseCatch || s.Phase == dsl.PhaseCleanup {
			continue
		}
		inStopped := false
		for p := parentPath(s.Path); p != "" && !inStopped; p = parentPath(p) {
			inStopped = stopped[p] || steps[p] != nil && steps[p].Every > 0
		}
		if !inStopped {
			what := s.Path + " (" + s.Kind + ")"
			if s.Name != "" {
				what = fmt.Sprintf("%s (%s, %s)", s.Path, s.Name, s.Kind)
			}
			return what + " is in the scenario but the run did not run it"
		}
	}
	return ""
}

// inCluster says where a step runs, in a message: in cluster c, the default when the step s
// (nil: as recorded) names none; "" is the one cluster (or machine) of a scenario that
// declares no clusters.
func inCluster(c string, s *dsl.Step) string {
	switch {
	case c == "":
		return "on the run's target (the scenario declares no clusters)"
	case s != nil && s.Cluster == "":
		return "in cluster " + c + " (the first of clusters:, where a step that names none runs)"
	}
	return "in cluster " + c
}

// recordedStep is a step record in a message: its path, name (or label) and kind.
func recordedStep(sr *StepRecord) string {
	if n := or(sr.Name, sr.Label); n != "" {
		return fmt.Sprintf("%s (%s, %s)", sr.Path, n, sr.Kind)
	}
	return fmt.Sprintf("%s (%s)", sr.Path, sr.Kind)
}

// sameSummary reports whether the step s, as the scenario declares it now, does what the
// record's summary says it did; now is what it would do, its ${...} resolved when they can be
// again from the record (vars: the record's own, which a ${...} that reads them alone resolves
// from as the run did).
func sameSummary(s *dsl.Step, recorded string, env map[string]any, redact *Redactor, vars map[string]any) (now string, same bool) {
	now = redact.String(dsl.Summary(s))
	if now == recorded {
		return now, true
	}
	if !s.HasTemplates() {
		return now, false
	}
	if !strings.Contains(now, "${") {
		// The ${...} are in parameters the summary does not show (a file's content): what
		// the summary shows is the same.
		return now, true
	}
	// The summary as the run made it (resolved when the step started), else with each ${...}
	// standing for any text (a value the step read from an earlier one may have changed
	// since).
	pattern := "^" + templatePattern(now) + "$"
	if p, err := s.Resolve(env); err == nil {
		now = redact.String(dsl.SummaryOf(p))
		if now == recorded {
			return now, true
		}
		if readsVarsOnly(s, vars) {
			// Its ${...} read the run's vars alone, which the record keeps as the run had
			// them: resolved again, it is what the run resolved. Before, it stood for any
			// text too: the record of a sweep's combination x=0 edited into combination
			// x=1 (its vars, unit and id; the seal computed again) replayed PASSED as x=1,
			// beside its step "echo 0" that x=1 resolves to "echo 1".
			return now, false
		}
	}
	re, err := regexp.Compile(pattern)
	return now, err == nil && re.MatchString(recorded)
}

// readsVarsOnly reports whether every ${...} of the step's parameters reads the vars and
// nothing else (no step's value, no target's, not the clock), each by a name vars (the
// record's) holds, and the step reads no file that holds one.
func readsVarsOnly(s *dsl.Step, vars map[string]any) bool {
	if s.FileTemplates || !s.HasTemplates() {
		return false
	}
	for _, t := range s.Templates() {
		for _, e := range t.Exprs() {
			names, whole := e.VarsRead()
			if e.Now || len(e.Reads) > 0 || len(e.Refs) > 0 || whole || len(names) == 0 {
				return false
			}
			for _, n := range names {
				if _, ok := vars[n]; !ok {
					return false
				}
			}
			for _, n := range e.Names {
				if n != "vars" {
					return false
				}
			}
		}
	}
	return true
}

// templatePattern is a regular expression matching s with each ${...} (nested braces
// counted) standing for any text.
func templatePattern(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(s))
			return b.String()
		}
		b.WriteString(regexp.QuoteMeta(s[:i]))
		depth, j := 0, i+1
		for ; j < len(s); j++ {
			if s[j] == '{' {
				depth++
			} else if s[j] == '}' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		b.WriteString(".*")
		if j >= len(s) {
			return b.String()
		}
		s = s[j+1:]
	}
}

// ChangedFile names the first step of rec whose file (Record.FileDigests) reads otherwise in
// sc's folder now, and how ("" when none does): what ChangedStep says of files alone, but
// for a digest the record lacks (the record's doing, not the file's). The
// scenario's source (Record.Source) does not cover the files its steps read: a record of an
// unchanged source may name a file changed since.
func ChangedFile(rec *Record, sc *dsl.Scenario) string {
	steps := map[string]*dsl.Step{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) { steps[s.Path] = s })
	}
	var env map[string]any
	for _, sr := range rec.Steps {
		if s := steps[sr.Path]; s != nil && s.Kind == sr.Kind {
			if env == nil {
				env = NewJudge(rec, sc).Env()
			}
			if why := changedFiles(rec, s, sr, sc.Dir, env, false); why != "" {
				return recordedStep(sr) + " " + why
			}
		}
	}
	return ""
}

// changedFiles says how the files the step reads (dsl.StepFiles, those whose path has no
// ${...}) differ from what the run read of them (Record.FileDigests; "" when they do not):
// the first whose content is not the one the run read, or that cannot be read now, or, in a
// record of version 3 (when missing says so), that a step which passed read without the
// record keeping its digest.
// dir is the scenario's folder, which a relative path starts from. A file whose content
// changed during the run (the run wrote it) is not compared. Before the digests were kept, a
// manifest an apply reads, edited since the run, was taken for the one the run applied.
// A path written with ${...} is resolved over the record (env, the judge's): the run read the
// file at the path it resolved, and kept its digest under that path. It is compared when the
// record keeps a digest under it (a step whose rounds resolved it otherwise may have read
// other paths: one the record lacks is not the record's doing). Before, such a path was not
// compared at all: the file at ${vars.f} edited since the run replayed PASSED.
func changedFiles(rec *Record, s *dsl.Step, sr *StepRecord, dir string, env map[string]any, missing bool) string {
	if rec.FileDigests == nil && rec.Version < 3 {
		return ""
	}
	files := readFiles(s)
	var resolved map[string][]string // the step's files, its ${...} resolved over env
	resolve := func() map[string][]string {
		if resolved == nil {
			resolved = map[string][]string{}
			if p, err := s.Resolve(env); env != nil && err == nil {
				c := *s
				c.Params = p
				resolved = readFiles(&c)
			}
		}
		return resolved
	}
	for _, field := range []string{"argv", "stdin"} {
		// A command's words are not its arguments one for one (a ${...} resolved to two
		// words, or none): those it resolves to are compared beside those written, each
		// where the record keeps its digest.
		if commandTemplated(s.Params) {
			files[field] = slices.Concat(files[field], resolve()[field])
		}
	}
	for _, field := range slices.Sorted(maps.Keys(files)) {
		for i, f := range files[field] {
			written := ""
			if strings.Contains(f, "${") {
				if field == "argv" || field == "stdin" || i >= len(resolve()[field]) || strings.Contains(resolved[field][i], "${") {
					continue // a command's: its resolved words are compared (above)
				}
				written, f = f, resolved[field][i]
				if _, ok := rec.FileDigests[f]; !ok {
					continue
				}
			}
			was, ok := rec.FileDigests[f]
			if !ok && (field == "argv" || field == "stdin") {
				continue // an argument the run found no file at, or one the record lacks (commandFiles)
			}
			where := s.Kind + "." + field
			if written != "" {
				where += ", written " + written
			}
			switch {
			case !ok && missing && sr.Outcome == Passed && sr.ExpectedError == "":
				return fmt.Sprintf("read %s (%s), and the record keeps no digest of it, which a run keeps of every file its steps read: the record was changed after the run or is corrupt", f, where)
			case !ok || was == ChangedDuringRun:
				continue
			}
			path := f
			if !filepath.IsAbs(path) && dir != "" {
				path = filepath.Join(dir, f)
			}
			d, err := fileDigest(path)
			if err != nil {
				return fmt.Sprintf("read %s (%s), which cannot be read now: %v", f, where, err)
			}
			if d != was {
				return fmt.Sprintf("read %s (%s), whose content changed since the run (the record keeps the digest of what the run read): the step would not do now what it did", f, where)
			}
		}
	}
	return ""
}

// readFiles are the files s reads, by field: dsl.StepFiles, and, of a command on this
// machine, under "argv" and "stdin", the arguments and words that may name a file of the lab
// (commandFiles), whose digests the record keeps of those that did when the command ran. Such an argument is
// compared when the record keeps its digest: the run cannot tell an argument that named no
// file from one whose digest was taken out.
func readFiles(s *dsl.Step) map[string][]string {
	files := dsl.StepFiles(s)
	argv, stdin := commandFiles(s.Params)
	for field, paths := range map[string][]string{"argv": argv, "stdin": stdin} {
		if len(paths) == 0 {
			continue
		}
		if files == nil {
			files = map[string][]string{}
		}
		files[field] = paths
	}
	return files
}

// changedClusters says where rec's clusters are not sc's (names and order, as the run
// recorded them: a record that keeps none is not compared), or a result names another cluster
// than the step that recorded it. Before, a two-cluster record whose list of clusters had one
// dropped or two names swapped, or whose result (a snapshot of west) was relabelled as read on
// east, replayed PASSED with nothing said, and its report showed the edited labels.
func changedClusters(rec *Record, sc *dsl.Scenario) string {
	if len(rec.Clusters) > 0 {
		var names []string
		for _, c := range rec.Clusters {
			names = append(names, c.Name)
		}
		if want := sc.ClusterNames(); !slices.Equal(names, want) {
			return fmt.Sprintf("the record's clusters are %s, and the scenario's %s: the run ran on the clusters its record names", quotedList(names), quotedList(want))
		}
	}
	stepOf := map[string]*StepRecord{}
	for _, sr := range rec.Steps {
		for _, k := range []string{sr.Name, sr.Path} {
			if _, ok := stepOf[k]; k != "" && !ok {
				stepOf[k] = sr
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(rec.Results)) {
		res := rec.Results[name]
		if sr := stepOf[name]; res != nil && sr != nil && res.Cluster != sr.Cluster {
			return fmt.Sprintf("result %s says it was read %s, and its step %s ran %s: a result is read where its step ran", name, inCluster(res.Cluster, nil), recordedStep(sr), inCluster(sr.Cluster, nil))
		}
	}
	return ""
}

// quotedList is names as "[a, b]", or "none".
func quotedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "[" + strings.Join(names, ", ") + "]"
}
