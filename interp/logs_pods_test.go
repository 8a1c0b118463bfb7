package interp_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLogsRecordPods: a logs step by selector records the pods it read (a kube read by
// selector reads every pod the selector matches) and each line's pod, which expressions read:
// the 503 of "no replica logged a 503" is found whichever replica logged it.
func TestLogsRecordPods(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "lg", logs: {selector: "app=backend", match: " 503 "}}]
	expect: [
		"lg.pods == ['backend-a', 'backend-b', 'backend-c']",
		"lg.count == 1 && lg.entries[0].pod == 'backend-c'",
	]
}
`)
	at := time.Now().Add(time.Hour)
	w := &fakes.World{Lines: []schema.LogLine{
		{Time: at, Text: "GET / 200 -", Pod: "backend-a"},
		{Time: at.Add(time.Millisecond), Text: "GET / 200 -", Pod: "backend-b"},
		{Time: at.Add(2 * time.Millisecond), Text: "GET / 503 UO", Pod: "backend-c"},
	}}
	rec := interp.New(w.Target(), interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
		Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s %+v", rec.Outcome, rec.Error, rec.Expectations)
	}
	if got := rec.Logs()["lg"].Pods; !reflect.DeepEqual(got, []string{"backend-a", "backend-b", "backend-c"}) {
		t.Errorf("pods %q", got)
	}
}

// podMarkingLogs is the fake world's log reader with a target's noting of pods at a mark
// (schema.PodMarker, as the kube driver's): it notes the pods it is asked of, and the mark
// each read is handed. A stand-in for a cluster.
type podMarkingLogs struct {
	*fakes.World
	err    error
	marked []string          // "ns/pod{selector}" of each noting
	got    []*schema.PodMark // the mark handed to each read
}

func (l *podMarkingLogs) MarkPods(ctx context.Context, ref schema.PodRef) (schema.PodMark, error) {
	l.marked = append(l.marked, ref.String())
	return schema.PodMark{UIDs: map[string]string{"backend-a": "1"}}, l.err
}

func (l *podMarkingLogs) Logs(ctx context.Context, req schema.Logs, from schema.LogSince, line func(schema.LogLine)) error {
	l.got = append(l.got, from.Pods)
	return l.World.Logs(ctx, req, from, line)
}

// TestLogsOfPodsMarked: the pods a logs read of pods names are noted at its mark (the start
// of the step its since names, or the run's), in its namespace, and the read is handed them,
// so that a pod gone since can be told (the kube driver errs then). Without it, a pod killed
// after logging the 503 went unseen and "no 503 since the mark" passed. Where they could not
// be noted, the step says so.
func TestLogsOfPodsMarked(t *testing.T) {
	for _, c := range []struct {
		name, steps string
		err         error
		wantMarked  []string
		wantWarn    string
	}{
		{"since a step", `{name: "m", sleep: "1ms"}, {name: "lg", logs: {selector: "app=backend", since: "m"}}`, nil,
			[]string{"lab/{app=backend}"}, ""},
		{"since the run's start", `{name: "lg", logs: {pod: "backend-a", namespace: "other"}}`, nil,
			[]string{"other/backend-a"}, ""},
		{"not noted", `{name: "m", sleep: "1ms"}, {name: "lg", logs: {selector: "app=backend", since: "m"}}`, errors.New("connection refused"),
			[]string{"lab/{app=backend}"}, "could not be noted at its mark (connection refused)"},
		{"a templated selector", `{name: "m", sleep: "1ms"}, {name: "lg", logs: {selector: "app=${vars.app}", since: "m"}}`, nil,
			[]string{"lab/{app=backend}"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	vars: app: "backend"
	steps: [`+c.steps+`]
}
`)
			l := &podMarkingLogs{World: &fakes.World{}, err: c.err}
			tgt := l.World.Target()
			tgt.Logs = l
			rec := interp.New(tgt, interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
				Run(context.Background(), context.Background(), sc)
			if rec.Outcome != interp.Passed {
				t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
			}
			if !reflect.DeepEqual(l.marked, c.wantMarked) {
				t.Errorf("noted %q, want %q", l.marked, c.wantMarked)
			}
			if len(l.got) != 1 || (c.wantWarn == "") != (l.got[0] != nil && l.got[0].UIDs["backend-a"] == "1") {
				t.Errorf("the read was handed %+v", l.got)
			}
			var warns []string
			for _, s := range rec.Steps {
				warns = append(warns, s.Warnings...)
			}
			if c.wantWarn == "" && len(warns) > 0 || c.wantWarn != "" && !slices.ContainsFunc(warns, func(w string) bool { return strings.Contains(w, c.wantWarn) }) {
				t.Errorf("warnings %q, want one with %q", warns, c.wantWarn)
			}
		})
	}
}

// lostWatch is a PodsSince whose watch of the selector's pods ended (a stand-in for the kube
// driver's, whose API server ended it).
type lostWatch string

func (l lostWatch) Lost() string { return string(l) }
func (lostWatch) Stop()          {}

// missingMarkLogs is podMarkingLogs whose mark could not follow the selector's pods.
type missingMarkLogs struct {
	*podMarkingLogs
	lost string
}

func (l *missingMarkLogs) MarkPods(ctx context.Context, ref schema.PodRef) (schema.PodMark, error) {
	m, err := l.podMarkingLogs.MarkPods(ctx, ref)
	if l.lost != "" {
		m.Since = lostWatch(l.lost)
	}
	return m, err
}

// TestLogsMissedPodsHaveNoValue (stand-in log reader for the cluster): a read of pods whose
// set of pods is known to be incomplete (the mark could not note them, the watch of the
// selector's pods ended) has no value for a claim on its lines: it only warned, and "no 503
// since the mark" (count == 0) PASSED over a pod it did not read. The record says why
// (missed), and a replay of it says the same. pods (those read) keeps its value.
func TestLogsMissedPodsHaveNoValue(t *testing.T) {
	for _, c := range []struct {
		name    string
		markErr error
		lost    string
		want    string // in the expectation's reason; "" passes
	}{
		{"followed", nil, "", ""},
		{"not noted", errors.New("connection refused"), "", "could not be noted at its mark (connection refused)"},
		{"watch ended", nil, "the watch of pods lab/{app=backend} ended: too old resource version", "could not be followed since its mark (the watch of pods lab/{app=backend} ended: too old resource version)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "m", sleep: "1ms"}, {name: "lg", logs: {selector: "app=backend", since: "m", match: " 503 "}}]
	expect: ["lg.count == 0", "len(lg.lines) == 0", "len(lg.pods) < 5"]
}
`)
			l := &missingMarkLogs{podMarkingLogs: &podMarkingLogs{World: &fakes.World{}, err: c.markErr}, lost: c.lost}
			tgt := l.World.Target()
			tgt.Logs = l
			rec := interp.New(tgt, interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
				Run(context.Background(), context.Background(), sc)
			if c.want == "" {
				if rec.Outcome != interp.Passed || rec.Logs()["lg"].Missed != "" {
					for _, jd := range rec.Expectations {
						t.Logf("%s: %s %s %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation)
					}
					t.Fatalf("outcome %s (%s), missed %q", rec.Outcome, rec.Error, rec.Logs()["lg"].Missed)
				}
				return
			}
			if rec.Outcome == interp.Passed {
				t.Fatalf("outcome PASSED over pods the read may have missed")
			}
			if got := rec.Logs()["lg"].Missed; !strings.Contains(got, c.want) {
				t.Errorf("missed %q, want %q in it", got, c.want)
			}
			check := func(how string, js []*interp.Judgement) {
				for i, jd := range js[:2] {
					if jd.Outcome != interp.Errored || !strings.Contains(jd.Reason, "may have missed pods") || !strings.Contains(jd.Reason, c.want) {
						t.Errorf("%s: %s: %s (%s), want an error saying the read may have missed pods", how, sc.Expect[i].Src, jd.Outcome, jd.Reason)
					}
				}
				if jd := js[2]; jd.Outcome != interp.Passed {
					t.Errorf("%s: %s: %s (%s), want its value kept", how, jd.Src, jd.Outcome, jd.Reason)
				}
			}
			check("run", rec.Expectations)
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"missed":`) {
				t.Errorf("the record does not say which pods were missed: %s", b)
			}
			var back interp.Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			check("replay", interp.Rejudge(&back, sc))
			// The record's missed is the run's word: its logs.txt, which does not say it, is
			// no contradiction of it (replay refused the record as edited).
			data := map[*interp.ArtifactRecord][]byte{}
			for _, a := range rec.Artifacts {
				data[a] = a.Data
			}
			if cs := interp.ArtifactContradictions(rec, sc, data); len(cs) > 0 {
				t.Errorf("the record's artifacts contradict it: %q", cs)
			}
		})
	}
}

// sourcesLogs is missingMarkLogs that tells the read which pods it reads (since.Sources), as
// the kube driver does: the pods of the fake world's lines. A stand-in for a cluster.
type sourcesLogs struct{ *missingMarkLogs }

func (l sourcesLogs) Logs(ctx context.Context, req schema.Logs, from schema.LogSince, line func(schema.LogLine)) error {
	var pods []string
	for _, ln := range l.World.Lines {
		if !slices.Contains(pods, ln.Pod) {
			pods = append(pods, ln.Pod)
		}
	}
	slices.Sort(pods)
	if from.Sources != nil {
		from.Sources(pods)
	}
	return l.missingMarkLogs.Logs(ctx, req, from, line)
}

// TestLogsRecordHeldToItsArtifact (stand-in log reader for the cluster): a logs record of
// pods is held to its logs.txt as the run wrote it: the lines of several pods start with
// [pod/NAME], and every entry of one pod's read is that pod's. Before, the check read the
// prefix as the line's text and gave no entry a pod, so the record of any read of pods was
// refused as edited. A record whose missed was taken out is held to the step's warning.
func TestLogsRecordHeldToItsArtifact(t *testing.T) {
	at := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name string
		pods []string
		lost string
		edit func(*schema.LogResult)
		want string
	}{
		{name: "one pod", pods: []string{"backend-a"}},
		{name: "two pods", pods: []string{"backend-a", "backend-b"}},
		{name: "missed, as recorded", pods: []string{"backend-a"}, lost: "the watch ended"},
		{name: "missed taken out", pods: []string{"backend-a"}, lost: "the watch ended", edit: func(r *schema.LogResult) { r.Missed = "" },
			want: "its warning says the read may have missed pods"},
		{name: "a line edited", pods: []string{"backend-a", "backend-b"}, edit: func(r *schema.LogResult) { r.Lines[1] = "GET / 200 -" },
			want: "lg.lines[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "m", sleep: "1ms"}, {name: "lg", logs: {selector: "app=backend", since: "m"}}]
	expect: ["lg.count > 0"]
}
`)
			var lines []schema.LogLine
			for i, p := range c.pods {
				lines = append(lines, schema.LogLine{Time: at.Add(time.Duration(i) * time.Millisecond), Text: "GET / 503 UF", Pod: p})
			}
			l := sourcesLogs{&missingMarkLogs{podMarkingLogs: &podMarkingLogs{World: &fakes.World{Lines: lines}}, lost: c.lost}}
			tgt := l.World.Target()
			tgt.Logs = l
			rec := interp.New(tgt, interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
				Run(context.Background(), context.Background(), sc)
			if got := rec.Logs()["lg"].Pods; !reflect.DeepEqual(got, c.pods) {
				t.Fatalf("pods %q, want %q", got, c.pods)
			}
			if c.edit != nil {
				r := rec.Logs()["lg"]
				r.Lines = slices.Clone(r.Lines)
				c.edit(&r)
				rec.Put("lg", "logs", false, r)
			}
			data := map[*interp.ArtifactRecord][]byte{}
			for _, a := range rec.Artifacts {
				data[a] = a.Data
			}
			got := strings.Join(interp.ArtifactContradictions(rec, sc, data), "\n")
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}
