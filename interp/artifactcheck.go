package interp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/driver/fortio"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/internal/secretmask"
	"labrun.dev/labrun/schema"
)

// ArtifactContradictions says where a step's recorded result is not what the raw artifact the
// run wrote beside it gives, parsed again as the step parsed it; nil when none is. data holds
// the artifacts' contents, as read from the record's artifacts folder (report.ReadArtifacts).
// The results held to their artifacts:
//   - a config step's value, read again from its config dumps (config_dump*.json) with the
//     step's resource, path and durations (envoy.ConfigFromDumps);
//   - a logs step's lines, entries, count, codes, flags, details and captures, parsed again
//     from the lines it read (logs.txt) with its match and capture (schema.LogsFromArtifact);
//   - a snapshot's counters, gauges, histograms and hosts, parsed again from the stats text,
//     Prometheus text and clusters JSON it read (stats-counters.txt, stats-gauges.txt,
//     stats-histograms.txt, prometheus.txt, clusters.json) with its cluster;
//   - a load's results (requests, codes, latencies…, not each pod's own), converted again
//     from the fortio JSON result it kept (fortio.json) as the load converted it;
//   - an exec step's stdout and stderr, the head and tail of its stdout.txt and stderr.txt
//     that the step keeps.
//
// A run writes a result and its artifacts from the same read, so a result that differs was
// changed after the run (a config value edited into a pass while the dump still says
// otherwise; a 503 line taken out of a logs result while logs.txt still holds it). Before,
// replay and merge judged such a record PASSED. What cannot be read again exactly as the run
// read it is not compared: a sampled step, a step that ran more than once (a repeat's rounds)
// but through the artifacts of its last run (lastRunArtifacts; a config, logs or snapshot
// step with ${...} not at all: its rounds may have resolved it otherwise), a config step that did not pass (its last read may have been cut short, keeping the value of
// the one before), a step whose artifact is missing (removed, or a record read alone) or holds
// a secret's mask (hidden after it was parsed), a step whose parameters cannot be resolved
// again, an artifact that does not parse (a passed snapshot's or logs step's, a load's
// fortio.json on the local or kube target: refused), a value with no JSON form (NaN). The record holds
// no digest of its artifacts: nothing else is compared. A logs step of a process is held to
// the process's output (processLogsContradiction). A load's pods (each pod's own
// fortio-<pod>.json) and events (events.txt is written from the events, not read) are not
// compared.
//
// sc nil (the scenario is not at hand: merge of records whose file is not here) compares what
// needs no step to parse: an exec's stdout and stderr, a load's results (fortio.json), a
// snapshot's and each sample's Prometheus text (prometheusContradictions); an
// artifact that holds any secret's mask is not compared then.
func ArtifactContradictions(rec *Record, sc *dsl.Scenario, data map[*ArtifactRecord][]byte) []string {
	if len(data) == 0 {
		return nil
	}
	steps := map[string]*dsl.Step{}
	if sc != nil {
		for _, ph := range sc.Phases() {
			dsl.Walk(ph.Steps, func(s *dsl.Step) { steps[s.Path] = s })
		}
	}
	runs := map[string][]*StepRecord{}
	for _, sr := range rec.Steps {
		name := or(sr.Name, sr.Path)
		runs[name] = append(runs[name], sr)
	}
	var env map[string]any
	var msgs []string
	for _, name := range sortedResultNames(rec) {
		res := rec.Results[name]
		rs := runs[name]
		if res != nil && res.Sampled && res.Kind == "snapshot" && sc != nil && len(rs) > 0 {
			if env == nil {
				env = NewJudge(rec, sc).Env()
			}
			msgs = append(msgs, seriesArtifactContradictions(name, steps[rs[0].Path], rs, res.Value, rec.Artifacts, data, sc.Secrets, env)...)
			continue
		}
		if res != nil && res.Kind == "snapshot" && sc == nil && len(rs) > 0 {
			msgs = append(msgs, prometheusContradictions(rec, name, res, rs, data)...)
			continue
		}
		if res == nil || res.Sampled || len(rs) == 0 {
			continue
		}
		sr := rs[len(rs)-1] // the run whose result the record keeps: the last
		s := steps[sr.Path]
		if sc == nil && (sr.Kind == "exec" || sr.Kind == "load") {
			s = &dsl.Step{Kind: sr.Kind} // parsed without the step's parameters
		}
		if s == nil || s.Kind != sr.Kind || sr.Kind != res.Kind || slices.ContainsFunc(rs, func(r *StepRecord) bool { return r.Sample > 0 || r.Path != sr.Path }) {
			continue
		}
		if len(rs) > 1 && s.HasTemplates() && s.Kind != "exec" && s.Kind != "load" {
			// Its rounds may have resolved it otherwise than the record's final values do.
			continue
		}
		var arts []*ArtifactRecord
		missing := false
		for _, a := range lastRunArtifacts(rec.Artifacts, name, len(rs)) {
			if a == nil {
				missing = true // a run wrote none of that name (an empty stream): whose it is is unknown
				continue
			}
			b, ok := data[a]
			if !ok {
				missing = true
				continue
			}
			if sc == nil && strings.Contains(string(b), strings.TrimSuffix(secretmask.Of(""), "]")) ||
				sc != nil && slices.ContainsFunc(sc.Secrets, func(n string) bool { return secretmask.Mentions(string(b), n) }) {
				missing = true // hidden after it was parsed: it cannot be parsed again as the run did
				continue
			}
			arts = append(arts, a)
		}
		if len(arts) == 0 && sr.Kind != "logs" { // a logs step of a process is held to its output
			continue
		}
		if sc == nil {
			var c string
			switch {
			case sr.Kind == "exec":
				c = execOutputContradiction(name, arts, data, res.Value, len(rs))
			case sr.Kind == "load" && sr.Outcome == Passed:
				c = loadContradiction(rec, name, arts, data, res.Value)
			}
			if c != "" {
				msgs = append(msgs, fmt.Sprintf("step %s (%s): %s", shownStep(sr), sr.Kind, c))
			}
			continue
		}
		if env == nil {
			env = NewJudge(rec, sc).Env()
		}
		p, err := s.Resolve(env)
		if err != nil {
			continue
		}
		var c string
		switch q := p.(type) {
		case *schema.Config:
			if sr.Outcome == Passed && !missing {
				c = configContradiction(name, q, arts, data, res.Value)
			}
		case *schema.Logs:
			if sr.Outcome == Passed {
				whole := !slices.ContainsFunc(sr.Warnings, func(w string) bool { return strings.HasPrefix(w, "the log could not be saved whole") })
				c = logsContradiction(name, q, arts, data, res.Value, whole, rec.Version, sr.Warnings)
			}
			// Lines dropped before the step read them (its warning, schema.DroppedWhy) are
			// in the process's output and not in logs.txt: such a result has no value for a
			// claim (LogResult.Dropped), and a record without that warning is compared.
			if c == "" && q.Process != "" && len(rs) == 1 && !slices.Contains(sr.Warnings, schema.DroppedWhy) {
				c = processLogsContradiction(rec, sr, q, arts, data)
			}
		case *schema.Snapshot:
			if sr.Outcome == Passed {
				c = snapshotContradiction(name, q, arts, data, res.Value)
			}
		case *schema.Load:
			if sr.Outcome == Passed {
				c = loadContradiction(rec, name, arts, data, res.Value)
			}
		case *schema.Exec:
			c = execOutputContradiction(name, arts, data, res.Value, len(rs))
		}
		if c != "" {
			msgs = append(msgs, fmt.Sprintf("step %s (%s): %s", shownStep(sr), sr.Kind, c))
		}
	}
	msgs = append(msgs, execEndContradictions(rec, steps, runs, data)...)
	msgs = append(msgs, podArtifactContradictions(rec, data)...)
	return append(msgs, readArtifactContradictions(rec, data)...)
}

// execEnded is what an exec's exit.txt a says of a command that ended without an exit code
// ("not started", "cut": schema.ExitNotStarted, schema.ExitCut, written since version 7); ""
// when it holds an exit code, or is not an exit.txt.
func execEnded(a *ArtifactRecord, data map[*ArtifactRecord][]byte) string {
	if a.Name != schema.ExitArtifact {
		return ""
	}
	switch text := strings.TrimSuffix(string(data[a]), "\n"); text {
	case schema.ExitNotStarted, schema.ExitCut:
		return text
	}
	return ""
}

// execEndContradictions say which exec steps that ran once passed where their exit.txt says
// the command ended without an exit code: it was cut (schema.ExitCut: its timeout, the
// scenario's, an interrupt), which passes only a step with expectFail, as the failure it
// expects (its expectedError); or it was not started (schema.ExitNotStarted), and their step
// (steps, by path: the scenario's) expects no such failure: a command that could not be
// started fails no expectFail: true (schema.DidNotRun), only a pattern that matches its error.
// Neither records a result: before exit.txt said which, a run whose command was not found,
// edited into "failed as expected", and one whose exec its timeout cut, edited into a pass
// (its end moved within its timeout), replayed PASSED. Without the scenario (merge of records
// whose file is not here), a command not started is not compared.
//
// A step that ran more than once (a repeat's rounds, a sampler's samples), each execution of
// which wrote an exit.txt (as many as it ran, in the order they ran: they ran one after the
// other), has each execution held to its own: before, a repeat's last round that its timeout
// cut, edited into a pass with the result that makes its until hold, replayed PASSED beside
// the exit.txt that says cut, and so did a sampler's sample its timeout cut.
func execEndContradictions(rec *Record, steps map[string]*dsl.Step, runs map[string][]*StepRecord, data map[*ArtifactRecord][]byte) []string {
	var msgs []string
	for _, sr := range rec.Steps {
		name := or(sr.Name, sr.Path)
		if sr.Kind != "exec" || sr.Outcome != Passed {
			continue
		}
		arts := lastRunArtifacts(rec.Artifacts, name, 1)
		if rs := runs[name]; len(rs) != 1 {
			arts = nil
			if a := execExitArtifacts(rec.Artifacts, name, rs)[sr]; a != nil {
				arts = []*ArtifactRecord{a}
			}
		}
		s := steps[sr.Path]
		for _, a := range arts {
			switch ended := execEnded(a, data); {
			case ended == schema.ExitCut && sr.ExpectedError == "":
				msgs = append(msgs, fmt.Sprintf("step %s (exec): its %s says the command was cut, but the record says the step passed: a command its timeout (the scenario's, an interrupt) cut ended the step with that error, which only an expectFail takes for the failure it expects", shownStep(sr), artifactFile(a)))
			case ended == schema.ExitNotStarted && s != nil && s.Kind == "exec" && s.ExpectFailRE == nil:
				expected := "the step passed"
				if s.ExpectFail {
					expected = "the step passed as its expectFail: true expected"
				}
				msgs = append(msgs, fmt.Sprintf("step %s (exec): its %s says the command was not started, but the record says %s: a command that could not be started fails the step, and expectFail: true does not expect it (only a pattern that matches its error does)", shownStep(sr), artifactFile(a), expected))
			}
		}
	}
	return msgs
}

// execExitArtifacts are the exit.txt artifacts of rs, the executions of the exec step name (a
// repeat's rounds, a sampler's samples), by execution, when each wrote one: rs are one step's,
// ran one after the other (each started after the one before it ended), and the record lists
// as many exit.txt of name as rs holds, which were written in the order they ran; nil
// otherwise.
func execExitArtifacts(all []*ArtifactRecord, name string, rs []*StepRecord) map[*StepRecord]*ArtifactRecord {
	byStart := slices.SortedStableFunc(slices.Values(rs), func(a, b *StepRecord) int { return cmp.Compare(a.Start, b.Start) })
	for i, r := range byStart {
		if r.Path != rs[0].Path || i > 0 && r.Start < byStart[i-1].End {
			return nil
		}
	}
	var exits []*ArtifactRecord
	for _, a := range all {
		if a != nil && a.Step == name && a.Name == schema.ExitArtifact {
			exits = append(exits, a)
		}
	}
	if len(exits) != len(rs) {
		return nil
	}
	out := map[*StepRecord]*ArtifactRecord{}
	for i, r := range byStart {
		out[r] = exits[i]
	}
	return out
}

// runsAndArtifacts are rec's runs of the steps keep takes, by step name (in order), and its
// artifacts by step and artifact name (a step that ran more than once: its last).
func runsAndArtifacts(rec *Record, keep func(*StepRecord) bool) (map[string][]*StepRecord, map[[2]string]*ArtifactRecord) {
	runs := map[string][]*StepRecord{}
	for _, sr := range rec.Steps {
		if keep(sr) {
			runs[or(sr.Name, sr.Path)] = append(runs[or(sr.Name, sr.Path)], sr)
		}
	}
	byName := map[[2]string]*ArtifactRecord{}
	for _, a := range rec.Artifacts {
		if a != nil {
			byName[[2]string{a.Step, a.Name}] = a
		}
	}
	return runs, byName
}

// readArtifactContradictions says where the pod a step other than a snapshot read (its record's
// read: an exec, config, logs or load by a selector) is not the one its pod.txt names (the pods
// used, "namespace/name" one a line, written when the selector picked them). The record says
// that pod once: before pod.txt, an exec's read edited to another pod was a run on that pod.
// A step is held to the pod.txt of its last run when every run read a pod (a repeat's rounds);
// a sample to its own (0001-pod.txt) when the step ran in one round; a record whose pod.txt is
// not beside it (one made before it, read alone) is not.
func readArtifactContradictions(rec *Record, data map[*ArtifactRecord][]byte) []string {
	runs, byName := runsAndArtifacts(rec, func(sr *StepRecord) bool { return sr.Kind != "snapshot" })
	var msgs []string
	check := func(sr *StepRecord, name, artifact string) {
		a := byName[[2]string{name, artifact}]
		b, ok := data[a]
		if a == nil || !ok {
			return
		}
		pods := strings.Fields(string(b))
		want := ""
		switch len(pods) {
		case 0:
		case 1:
			want = "pod " + pods[0]
		default:
			want = "pods " + strings.Join(pods, ", ")
		}
		if sr.Read != want {
			msgs = append(msgs, fmt.Sprintf("step %s (%s): its %s says it read %s, but the record says it read %q: both come from the one pick of its selector", shownStep(sr), sr.Kind, artifactFile(a), or(strings.TrimPrefix(strings.TrimPrefix(want, "pods "), "pod "), "no pod"), sr.Read))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(runs)) {
		rs := runs[name]
		var whole, samples []*StepRecord
		rounds := 0
		for _, sr := range rs {
			rounds = max(rounds, sr.Round)
			if sr.Sample > 0 {
				samples = append(samples, sr)
			} else if sr.Kind != "block" && sr.Kind != "parallel" {
				whole = append(whole, sr)
			}
		}
		if len(whole) > 0 && !slices.ContainsFunc(whole, func(sr *StepRecord) bool { return sr.Read == "" }) || len(whole) == 1 {
			check(whole[len(whole)-1], name, schema.PodArtifact)
		}
		if rounds <= 1 {
			for _, sr := range samples {
				check(sr, name, fmt.Sprintf("%04d-%s", sr.Sample, schema.PodArtifact))
			}
		}
	}
	return msgs
}

// podArtifactContradictions says where a snapshot's pod (or a series sample's) is not the one
// its pod.txt names (schema.PodArtifact, "namespace/name uid", written from the same read).
// The record says the pod twice, in the step's read and the snapshot's pod (podReads holds
// them to each other); before pod.txt, an edit of both - two samples of a selector made to
// read two pods, or two reads of two pods made one - was judged as a run over those pods.
// A snapshot is held to the pod.txt of its run (of its last run, for a step that ran more
// than once, when each wrote one), a series' samples to those of the samples that passed, in
// order; a snapshot whose pod.txt is missing (a record made before it, a run whose artifacts
// are not beside the record) is not compared.
func podArtifactContradictions(rec *Record, data map[*ArtifactRecord][]byte) []string {
	runs, byName := runsAndArtifacts(rec, func(sr *StepRecord) bool { return sr.Kind == "snapshot" })
	var msgs []string
	check := func(sr *StepRecord, name, artifact string, sn *SnapshotRecord) {
		a := byName[[2]string{name, artifact}]
		b, ok := data[a]
		if a == nil || !ok || sn == nil {
			return
		}
		f := strings.Fields(string(b))
		if len(f) == 0 || len(f) > 2 {
			msgs = append(msgs, fmt.Sprintf("step %s (snapshot): its %s does not read as the pod a snapshot read (%q)", shownStep(sr), artifactFile(a), clip(string(b))))
			return
		}
		pod, uid := f[0], ""
		if len(f) == 2 {
			uid = f[1]
		}
		if pod != sn.Pod || uid != sn.PodUID {
			msgs = append(msgs, fmt.Sprintf("step %s (snapshot): its %s says it read pod %s, but the record's snapshot has pod %s: both come from the one read", shownStep(sr), artifactFile(a), podAndUID(pod, uid), podAndUID(sn.Pod, sn.PodUID)))
		}
	}
	for _, name := range sortedResultNames(rec) {
		res, rs := rec.Results[name], runs[name]
		if res == nil || res.Kind != "snapshot" || len(rs) == 0 {
			continue
		}
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			if !res.Sampled {
				check(rs[len(rs)-1], name, schema.PodArtifact, v)
			}
		case *SeriesRecord:
			if v == nil {
				continue
			}
			var passed []*StepRecord
			for _, sr := range rs {
				if sr.Sample > 0 && sr.Outcome == Passed {
					passed = append(passed, sr)
				}
			}
			if len(passed) != len(v.Samples) {
				continue
			}
			for i, sr := range passed {
				check(sr, name, fmt.Sprintf("%04d-%s", sr.Sample, schema.PodArtifact), v.Samples[i])
			}
		}
	}
	return msgs
}

// podAndUID is a pod in a message: "lab/a" or "lab/a (uid 1234)".
func podAndUID(pod, uid string) string {
	if uid == "" {
		return pod
	}
	return fmt.Sprintf("%s (uid %s)", pod, uid)
}

// lastRunArtifacts are the artifacts of the step named name that its last run (of runs) wrote.
// A step that ran once wrote all of them. A step that ran more than once (a repeat's rounds)
// wrote each of its names once a run, in order, except a stream it wrote nothing to: the last
// of a name is the last run's when every run wrote one of that name; a name some run did not
// write is given as nil (which run wrote which is unknown). Before, a step that ran more than
// once was not compared at all: the last round's stdout edited into the repeat's until (and
// the repeat made passed) replayed PASSED while its artifact of that round said otherwise.
func lastRunArtifacts(all []*ArtifactRecord, name string, runs int) []*ArtifactRecord {
	var out []*ArtifactRecord
	if runs <= 1 {
		for _, a := range all {
			if a != nil && a.Step == name {
				out = append(out, a)
			}
		}
		return out
	}
	count := map[string]int{}
	last := map[string]*ArtifactRecord{}
	var order []string
	for _, a := range all {
		if a == nil || a.Step != name {
			continue
		}
		if count[a.Name] == 0 {
			order = append(order, a.Name)
		}
		count[a.Name]++
		last[a.Name] = a
	}
	for _, n := range order {
		if count[n] == runs {
			out = append(out, last[n])
		} else {
			out = append(out, nil)
		}
	}
	return out
}

// artifactFile names an artifact in a message: its name, and the file it is in.
func artifactFile(a *ArtifactRecord) string {
	if a.File == "" || a.File == a.Step+"-"+a.Name {
		return "artifact " + or(a.File, a.Name)
	}
	return fmt.Sprintf("artifact %s (in %s)", a.Name, a.File)
}

// configContradiction compares a config step's value with the one its dumps give.
func configContradiction(name string, p *schema.Config, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte, recorded any) string {
	var dumps []schema.Artifact
	var from *ArtifactRecord
	for _, a := range arts {
		if a.Name == "config_dump.json" || strings.HasPrefix(a.Name, "config_dump-") {
			dumps = append(dumps, schema.Artifact{Name: a.Name, Data: data[a]})
			from = a
		}
	}
	if len(dumps) == 0 {
		return ""
	}
	got, err := envoy.ConfigFromDumps(*p, dumps)
	if err != nil || !hasJSONForm(got) {
		return ""
	}
	if len(dumps) > 1 {
		// The dump that gave the value: the first that holds the resource.
		for _, a := range arts {
			if one, err := envoy.ConfigFromDumps(*p, []schema.Artifact{{Name: a.Name, Data: data[a]}}); err == nil && reflect.DeepEqual(jsonForm(one), jsonForm(got)) {
				from = a
				break
			}
		}
	}
	where, want, have, ok := firstDifference(name, jsonForm(got), jsonForm(recorded))
	if !ok {
		return ""
	}
	return fmt.Sprintf("its %s gives %s = %s, but the record's value has %s", artifactFile(from), where, want, have)
}

// logsContradiction compares a logs step's result with the one its logs.txt gives.
//
// A logs.txt that does not parse (a line without its time) of a step whose log was saved
// whole (whole: no warning says otherwise) is refused: labrun writes each line "time text"
// as it reads it. Before, a 503 line taken out of the result, its time taken off the line
// in logs.txt, replayed PASSED, the check skipped.
func logsContradiction(name string, p *schema.Logs, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte, recorded any, whole bool, version int, warnings []string) string {
	rec, ok := recorded.(schema.LogResult)
	if !ok {
		return ""
	}
	for _, a := range arts {
		if a.Name != "logs.txt" {
			continue
		}
		got, err := schema.LogsFromArtifact(p, data[a], envoy.AccessLog, rec.Pods)
		if err != nil && whole {
			return fmt.Sprintf("its %s does not read as the lines labrun writes there, each with its time (%v), but the step saved its log whole", artifactFile(a), err)
		}
		if err != nil || !hasJSONForm(got) {
			return ""
		}
		if version < 5 && rec.Cut {
			// A cut log of a record before version 5: the lines not kept were counted by the
			// older rules (no flags["-"], no count of fields a format does not give), and only
			// the kept lines could be read again (Record.RereadLogs): those counts are the
			// log's as this labrun reads it.
			rec.Flags, rec.Untold = maps.Clone(rec.Flags), got.Untold
			if n, ok := got.Flags["-"]; ok {
				rec.Flags["-"] = n
			} else {
				delete(rec.Flags, "-")
			}
		}
		got.Cut, rec.Cut = false, false
		// The pods a read may have missed are the run's word, not the log's; the step's
		// warning says them too, and a record whose missed was taken out is held to it.
		got.Missed = rec.Missed
		if w, ok := missedWarning(warnings); ok && w != rec.Missed {
			return fmt.Sprintf("its warning says the read may have missed pods (%s), but the record's result says %q", w, rec.Missed)
		}
		// Lines dropped before the step read them are the run's word too (its warning).
		got.Dropped = rec.Dropped
		if slices.Contains(warnings, schema.DroppedWhy) != (rec.Dropped != "") {
			return fmt.Sprintf("its warnings and the record's result disagree on whether lines were dropped before it read them (result: %q)", rec.Dropped)
		}
		if where, want, have, ok := firstDifference(name, jsonForm(got), jsonForm(rec)); ok {
			return fmt.Sprintf("its %s gives %s = %s, but the record's result has %s", artifactFile(a), where, want, have)
		}
	}
	return ""
}

// missedWarning is the why of a logs step's warning that its read may have missed pods
// (schema.MissedWarning), if it has one.
func missedWarning(warnings []string) (string, bool) {
	for _, w := range warnings {
		if why, ok := strings.CutPrefix(w, schema.MissedWarning); ok {
			return strings.TrimSuffix(why, schema.MissedWarningEnd), true
		}
	}
	return "", false
}

// processLogsContradiction compares the lines a logs step of a process read (its logs.txt)
// with the process's own output (the process step's output.txt), both written as the lines
// came, each after the time it was read: the lines the process wrote before the logs step
// started are those logs.txt begins with, in order, when the step reads from the run's start
// (no since); with since, logs.txt is a run of consecutive lines of the output. Before, a
// logs step's 503 line taken out of its result and of its logs.txt (the record and its
// artifact edited alike) replayed PASSED while the process's output.txt still held it. ""
// when they agree, or cannot be compared (the output missing or not one, a line without its
// time).
func processLogsContradiction(rec *Record, sr *StepRecord, q *schema.Logs, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte) string {
	var out *ArtifactRecord
	for _, a := range rec.Artifacts {
		if a != nil && a.Step == q.Process && a.Name == "output.txt" {
			if out != nil {
				return "" // the process ran more than once
			}
			out = a
		}
	}
	output, ok := data[out]
	if out == nil || !ok || rec.Start.IsZero() {
		return ""
	}
	var read []byte
	for _, a := range arts {
		if a.Name == "logs.txt" {
			read = data[a]
		}
	}
	all := strings.SplitAfter(string(output), "\n")
	got := strings.SplitAfter(string(read), "\n")
	all, got = all[:len(all)-1], got[:len(got)-1] // the text after the last line break: none, or a line still being written
	if q.Since == "" {
		began := rec.Start.Add(sr.Start - timeSlack(sr.Start)) // a line stamped right before may not have been read yet
		for i, l := range all {
			stamp, _, _ := strings.Cut(l, " ")
			t, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				return ""
			}
			if !t.Before(began) {
				break
			}
			if i >= len(got) || got[i] != l {
				return fmt.Sprintf("the process %s wrote %q (its %s) before the step started to read it, but its %s does not hold it there", q.Process, clip(strings.TrimSuffix(l, "\n")), artifactFile(out), logsFile(arts))
			}
		}
	}
	if len(got) > 0 && !strings.Contains(strings.Join(all, ""), strings.Join(got, "")) {
		return fmt.Sprintf("its %s is not lines the process %s wrote one after another (its %s): lines were taken out or changed", logsFile(arts), q.Process, artifactFile(out))
	}
	return ""
}

// logsFile names a logs step's logs.txt among its artifacts, or says it has none.
func logsFile(arts []*ArtifactRecord) string {
	for _, a := range arts {
		if a.Name == "logs.txt" {
			return artifactFile(a)
		}
	}
	return "logs (no logs.txt: it read no line)"
}

// execOutputContradiction compares an exec step's stdout, stderr and exit code with what its
// stdout.txt, stderr.txt and exit.txt give (its captured groups are held to that stdout by
// execContradiction). A stream with no artifact was empty (an empty stream writes none) or its
// artifact is missing: it is not compared; a missing exit.txt is refused by
// execArtifactAbsences (records of version 4 on). An exit.txt that says the command ended
// without an exit code (schema.ExitNotStarted, schema.ExitCut) is of a run that recorded no
// result: of the step's only run, the record's result was added; of the last of several (a
// repeat's round its timeout cut), the result is an earlier run's, which the last run's
// artifacts do not give: not compared.
func execOutputContradiction(name string, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte, recorded any, runs int) string {
	var rec schema.ExecResult
	switch v := recorded.(type) {
	case schema.ExecResult:
		rec = v
	case *schema.ExecResult:
		if v == nil {
			return ""
		}
		rec = *v
	default:
		return ""
	}
	for _, a := range arts {
		if ended := execEnded(a, data); a.Name == schema.ExitArtifact && ended != "" {
			if runs > 1 {
				return ""
			}
			return fmt.Sprintf("its %s says the command was %s, with no exit code, but the record's result has %s.exit = %s: an exec records its result once the command exits", artifactFile(a), ended, name, strconv.FormatFloat(rec.Exit, 'f', -1, 64))
		}
	}
	for _, a := range arts {
		var field, have string
		switch a.Name {
		case schema.ExitArtifact:
			text := strings.TrimSuffix(string(data[a]), "\n")
			exit, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Sprintf("its %s does not hold an exit code (%s), but an exec writes the one it records there", artifactFile(a), clipJSON(text))
			}
			if exit != rec.Exit {
				return fmt.Sprintf("its %s gives %s.exit = %s, but the record's result has %s", artifactFile(a), name, text, strconv.FormatFloat(rec.Exit, 'f', -1, 64))
			}
			continue
		case "stdout.txt":
			field, have = "stdout", rec.Stdout
		case "stderr.txt":
			field, have = "stderr", rec.Stderr
		default:
			continue
		}
		c := schema.NewCapture(nil, schema.OutputHead, schema.OutputTail)
		_, _ = c.Write(data[a])
		if want := c.Text(); want != have {
			return fmt.Sprintf("its %s gives %s.%s = %s, but the record's result has %s", artifactFile(a), name, field, clipJSON(want), clipJSON(have))
		}
	}
	return ""
}

// loadContradiction compares a load's results (not each pod's own, under pods) with what
// fortio's JSON result it kept (fortio.json: on the kube target, the pods' results merged)
// gives, converted as the load converted it (fortio.DecodeJSON), and that fortio.json to the
// sums fortio keeps (fortio.Contradictions). On the targets whose loads are fortio's (local,
// kube: a load that recorded a result kept fortio's JSON as it read it), a fortio.json that
// does not read as fortio's result is refused: before, a record edited into a pass with its
// fortio.json cut short, or stripped of its RunType, replayed PASSED, the check skipped. On
// the local target, fortio's own start (its StartTime, read on labrun's clock) is within the
// load's start and end (fortioStartContradiction).
func loadContradiction(rec *Record, name string, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte, recorded any) string {
	l, ok := recorded.(*schema.LoadRecorded)
	if !ok || l == nil {
		return ""
	}
	target := rec.Target
	for _, a := range arts {
		if a.Name != "fortio.json" {
			continue
		}
		res, err := fortio.DecodeJSON(data[a])
		if err != nil {
			if FortioTarget(target) {
				return fmt.Sprintf("its %s does not read as fortio's result (%v), but a load on the %s target keeps fortio's result as fortio wrote it", artifactFile(a), err, target)
			}
			return ""
		}
		if cs := fortio.Contradictions(data[a]); len(cs) > 0 {
			return fmt.Sprintf("its %s breaks the sums fortio keeps in every result: %s", artifactFile(a), strings.Join(cs, "; "))
		}
		got, have := res.LoadResult, l.LoadResult
		got.Pods, have.Pods, got.Pod, have.Pod = nil, nil, "", ""
		if rec.Version < 9 {
			got.ErrorLatency = nil // kept apart from version 9 on: an older labrun read fortio's result without it
		}
		if !hasJSONForm(got) || !hasJSONForm(have) {
			return ""
		}
		if where, want, has, ok := firstDifference(name, jsonForm(got), jsonForm(have)); ok {
			return fmt.Sprintf("its %s gives %s = %s, but the record's result has %s", artifactFile(a), where, want, has)
		}
		if c := fortioStartContradiction(rec, l, data[a]); c != "" {
			return fmt.Sprintf("its %s %s", artifactFile(a), c)
		}
	}
	for _, a := range arts {
		if a.Name == "codes-over-time.json" && l.Partial == "" {
			if c := codesOverTimeContradiction(l, data[a]); c != "" {
				return fmt.Sprintf("its %s %s", artifactFile(a), c)
			}
		}
	}
	return ""
}

// codesOverTimeContradiction says how the codes over time a load kept (codes-over-time.json,
// the report's chart: fortio's in-process runner reports each request it counts, with its
// code, once, and not its warm-up requests) do not add up to the load's codes. Before, a
// load's codes-over-time.json edited to show 503s its result did not count (the seal computed
// again) drew them in the report of a run that replayed PASSED. A load stopped before its end
// (partial) is not compared.
func codesOverTimeContradiction(l *schema.LoadRecorded, raw []byte) string {
	var buckets []schema.CodesOverTime
	if json.Unmarshal(raw, &buckets) != nil {
		return "does not read as the codes of a load over time"
	}
	sums := map[string]float64{}
	for _, b := range buckets {
		for k, n := range b.Codes {
			sums[k] += float64(n)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(sums)) {
		if sums[k] != l.Codes[k] {
			return fmt.Sprintf("counts %s responses of code %s over time, but the record's result has %s", dsl.FormatValue(sums[k]), k, dsl.FormatValue(l.Codes[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(l.Codes)) {
		if _, ok := sums[k]; !ok && l.Codes[k] > 0 {
			return fmt.Sprintf("counts no response of code %s over time, but the record's result has %s", k, dsl.FormatValue(l.Codes[k]))
		}
	}
	return ""
}

// fortioStartContradiction says how the start fortio's JSON result gives (StartTime, and its
// end: StartTime plus ActualDuration) is not within the start and end of the load l, on the
// local target, where labrun runs fortio itself and reads both on one clock (the load's start
// before fortio starts, its end after it ends; with timeSlack, as the record's other times):
// it is the time of a step that an artifact holds. Before, a load step moved 2 s later with
// its result's start and end and the run's end (every time in the record consistent), so that
// a claim that it started a second after the step before it ended held, replayed PASSED. On
// the kube target fortio runs in a pod, on the pod's clock (or the sandbox replays one a
// recording timed), and is not compared.
func fortioStartContradiction(rec *Record, l *schema.LoadRecorded, raw []byte) string {
	var fr struct {
		StartTime      time.Time
		ActualDuration time.Duration
	}
	if rec.Target != "local" || l.Start.IsZero() || l.End.IsZero() || rec.Start.IsZero() || json.Unmarshal(raw, &fr) != nil || fr.StartTime.IsZero() {
		return ""
	}
	from, to := l.Start.Sub(rec.Start), l.End.Sub(rec.Start)
	started, ended := fr.StartTime.Sub(rec.Start), fr.StartTime.Add(fr.ActualDuration).Sub(rec.Start)
	if started < from-timeSlack(from) || ended > to+timeSlack(to) {
		return fmt.Sprintf("says fortio started the load at %s and ended it at %s, but the record's load ran from %s to %s (times from the run's start): the step's times were moved after the run", secs(started), secs(ended), secs(from), secs(to))
	}
	return ""
}

// snapshotContradiction compares a snapshot's stats and hosts with what the texts it read
// give.
func snapshotContradiction(name string, p *schema.Snapshot, arts []*ArtifactRecord, data map[*ArtifactRecord][]byte, recorded any) string {
	sn, ok := recorded.(*SnapshotRecord)
	if !ok || sn == nil {
		return ""
	}
	for _, a := range arts {
		var got, have any
		var err error
		switch sampleArtifactName(a.Name) {
		case "stats-counters.txt":
			var st schema.Stats
			st, err = envoy.ClusterStats(data[a], p.Cluster)
			got, have = nonNilStats(st), nonNilStats(sn.Counters)
		case "stats-gauges.txt":
			var st schema.Stats
			st, err = envoy.ClusterStats(data[a], p.Cluster)
			got, have = nonNilStats(st), nonNilStats(sn.Gauges)
		case "stats-histograms.txt":
			var st schema.Stats
			st, err = envoy.ClusterHistograms(data[a], p.Cluster)
			got, have = nonNilStats(st), nonNilStats(sn.Histograms)
		case "prometheus.txt":
			var c, g schema.Stats
			c, g, err = envoy.Prometheus(data[a])
			got = map[string]any{"counters": nonNilStats(c), "gauges": nonNilStats(g)}
			have = map[string]any{"counters": nonNilStats(sn.Counters), "gauges": nonNilStats(sn.Gauges)}
		case "clusters.json":
			var h []schema.Host
			h, err = envoy.Clusters(data[a], p.Cluster)
			got, have = h, sn.Hosts
		default:
			continue
		}
		if err != nil {
			// The snapshot passed: its driver parsed this very text with the same parser.
			// Before, a record edited into a pass beside a stats text made unreadable (one
			// value written as a word) replayed PASSED, the check skipped.
			return fmt.Sprintf("its %s does not parse as the snapshot parsed it (%v), but the snapshot passed, which it does only over a text that parses", artifactFile(a), err)
		}
		if !hasJSONForm(got) || !hasJSONForm(have) {
			continue
		}
		at := name
		if sampleArtifactName(a.Name) == "clusters.json" {
			at = name + ".hosts"
		}
		if where, want, has, ok := firstDifference(at, jsonForm(got), jsonForm(have)); ok {
			if sampleArtifactName(a.Name) == "prometheus.txt" {
				// counters and gauges are one map to expressions: name the stat.
				_, stat, _ := strings.Cut(strings.TrimPrefix(where, name+"."), ".")
				where = name + "." + stat
			}
			return fmt.Sprintf("its %s gives %s = %s, but the record's snapshot has %s", artifactFile(a), where, want, has)
		}
	}
	return ""
}

// seriesArtifactContradictions compares each sample of a sampled snapshot (a series) with
// the stats texts that sample wrote (its artifacts named "0003-prometheus.txt", …), as
// snapshotContradiction compares a snapshot with its own. Before, every sampled result was
// left out: a series of a Prometheus endpoint whose samples were edited from 20 503s to none
// (the expectation's values and the outcomes with them) replayed PASSED beside the
// prometheus.txt of each sample. The samples that passed are the series' samples, in order
// (a failed sample records none); a series whose step ran in more than one round, or whose
// passed samples are not its samples one for one, is not compared, nor a sample whose
// artifact holds a secret's mask.
func seriesArtifactContradictions(name string, s *dsl.Step, rs []*StepRecord, value any, all []*ArtifactRecord, data map[*ArtifactRecord][]byte, secrets []string, env map[string]any) []string {
	series, ok := value.(*SeriesRecord)
	if !ok || series == nil || s == nil || s.Kind != "snapshot" {
		return nil
	}
	var passed []*StepRecord
	for _, sr := range rs {
		if sr.Round > 1 || sr.Path != s.Path {
			return nil
		}
		if sr.Sample > 0 && sr.Outcome == Passed {
			passed = append(passed, sr)
		}
	}
	if len(passed) != len(series.Samples) {
		return nil
	}
	p, err := s.Resolve(env)
	q, ok := p.(*schema.Snapshot)
	if err != nil || !ok {
		return nil
	}
	var msgs []string
	for i, sr := range passed {
		prefix := fmt.Sprintf("%04d-", sr.Sample)
		var arts []*ArtifactRecord
		hidden := false
		for _, a := range all {
			if a == nil || a.Step != name || !strings.HasPrefix(a.Name, prefix) {
				continue
			}
			b, ok := data[a]
			if !ok {
				continue
			}
			if slices.ContainsFunc(secrets, func(n string) bool { return secretmask.Mentions(string(b), n) }) {
				hidden = true
			}
			arts = append(arts, a)
		}
		if hidden || len(arts) == 0 {
			continue
		}
		if c := snapshotContradiction(name, q, arts, data, series.Samples[i]); c != "" {
			msgs = append(msgs, fmt.Sprintf("step %s (sample %d) (snapshot): %s", name, sr.Sample, c))
		}
	}
	if len(msgs) > 1 {
		// The first says what differs; the rest, that it is not one sample.
		return []string{fmt.Sprintf("%s (and %d more of its samples differ from theirs)", msgs[0], len(msgs)-1)}
	}
	return msgs
}

// prometheusContradictions compares a snapshot's result (one, or a series' samples) with the
// Prometheus texts it read (prometheus.txt, "0003-prometheus.txt"), without the scenario (sc
// nil: diff, merge of a record whose file is not here): a Prometheus text is parsed whole,
// whatever the step's parameters, where an Envoy stats text is read for the step's cluster.
// Before, labrun diff compared no snapshot: a record whose series' samples were edited from
// 503s to none beside their prometheus.txt showed its difference from another run as measured.
// An artifact that holds any secret's mask is not compared, nor a snapshot that ran more than
// once (a repeat's rounds).
func prometheusContradictions(rec *Record, name string, res *Result, rs []*StepRecord, data map[*ArtifactRecord][]byte) []string {
	var arts []*ArtifactRecord
	for _, a := range rec.Artifacts {
		if a == nil || a.Step != name || sampleArtifactName(a.Name) != "prometheus.txt" {
			continue
		}
		b, ok := data[a]
		if !ok || strings.Contains(string(b), strings.TrimSuffix(secretmask.Of(""), "]")) {
			continue
		}
		arts = append(arts, a)
	}
	if len(arts) == 0 {
		return nil
	}
	stub := &dsl.Step{Kind: "snapshot", Path: rs[0].Path, Params: &schema.Snapshot{}}
	if res.Sampled {
		return seriesArtifactContradictions(name, stub, rs, res.Value, arts, data, nil, nil)
	}
	sr := rs[len(rs)-1]
	if len(rs) > 1 || sr.Sample > 0 || sr.Outcome != Passed {
		return nil
	}
	if c := snapshotContradiction(name, &schema.Snapshot{}, arts, data, res.Value); c != "" {
		return []string{fmt.Sprintf("step %s (%s): %s", shownStep(sr), sr.Kind, c)}
	}
	return nil
}

// sampleArtifactName is an artifact's name without the "0003-" a sample's artifacts begin with.
func sampleArtifactName(n string) string {
	if len(n) > 5 && n[4] == '-' && strings.Trim(n[:4], "0123456789") == "" {
		return n[5:]
	}
	return n
}

// nonNilStats is st, empty when nil (a snapshot records no stats as {}).
func nonNilStats(st schema.Stats) schema.Stats {
	if st == nil {
		return schema.Stats{}
	}
	return st
}

// hasJSONForm says whether v can be written in JSON (a NaN cannot: the record writes it in
// another form, which is not compared).
func hasJSONForm(v any) bool {
	_, err := json.Marshal(v)
	return err == nil
}

// clipJSON is v in JSON, clipped.
func clipJSON(v any) string {
	b, err := MarshalUnescaped(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b))
}

// jsonForm is v as JSON reads it back (numbers float64, structs maps), nil when it has no JSON
// form.
func jsonForm(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// firstDifference is the first place, in order of keys and indexes, where want (what an
// artifact gives) and have (what the record holds) differ: its path from at and both values
// in JSON ("none" where one has nothing); ok false when they are equal.
func firstDifference(at string, want, have any) (where, w, h string, ok bool) {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch a := want.(type) {
	case map[string]any:
		if b, isMap := have.(map[string]any); isMap {
			keys := slices.Sorted(maps.Keys(a))
			for k := range b {
				if _, in := a[k]; !in {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range slices.Compact(keys) {
				x, inA := a[k]
				y, inB := b[k]
				switch {
				case !inA:
					return join(k), "none", clipJSON(y), true
				case !inB:
					return join(k), clipJSON(x), "none", true
				}
				if where, w, h, ok := firstDifference(join(k), x, y); ok {
					return where, w, h, true
				}
			}
			return "", "", "", false
		}
	case []any:
		if b, isList := have.([]any); isList {
			for i := range max(len(a), len(b)) {
				el := at + "[" + strconv.Itoa(i) + "]"
				switch {
				case i >= len(a):
					return el, "none", clipJSON(b[i]), true
				case i >= len(b):
					return el, clipJSON(a[i]), "none", true
				}
				if where, w, h, ok := firstDifference(el, a[i], b[i]); ok {
					return where, w, h, true
				}
			}
			return "", "", "", false
		}
	}
	if reflect.DeepEqual(want, have) {
		return "", "", "", false
	}
	if at == "" {
		at = "the result"
	}
	return at, clipJSON(want), clipJSON(have), true
}
