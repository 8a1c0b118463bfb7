package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// okCUE is a scenario that passes: the suites of these tests run it beside the one edited.
const okCUE = `package lab

import "labrun.dev/schema"

ok: schema.#Scenario & {
	steps: [{name: "hi", exec: argv: ["echo", "hello"]}]
	expect: ["hi.stdout == \"hello\\n\""]
}
`

// stateSweepCUE sweeps n over 1 and 2: n=1 passes, n=2 passes while the file state says ok.
const stateSweepCUE = `package lab

import "labrun.dev/schema"

// n=2 passes while the file state says ok.
s: schema.#Scenario & {
	vars: n: *1 | int
	sweep: n: [1, 2]
	steps: [{name: "st", exec: argv: ["sh", "-c", "if [ \(vars.n) = 1 ]; then echo ok; else cat state; fi"]}]
	expect: ["st.stdout == \"ok\\n\""]
}
`

// suiteWithStandIn runs ok.cue and bad.cue (bad fails: it echoes vars.word, "bye", where its
// expectation wants "hello") as one labrun run into dir/suite, then bad alone with args into
// dir/alone, and returns dir/m: the suite's records with bad's replaced by the lone run's
// passed record, the suite's invocation copied into it, its seal computed again.
func suiteWithStandIn(t *testing.T, edit func(dir string), args ...string) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	writeIn(t, filepath.Join(dir, "ok.cue"), okCUE)
	writeIn(t, filepath.Join(dir, "bad.cue"), `package lab

import "labrun.dev/schema"

bad: schema.#Scenario & {
	vars: word: *"bye" | string
	steps: [{name: "hi", exec: argv: ["echo", vars.word]}]
	expect: ["hi.stdout == \"hello\\n\""]
}
`)
	if code, out := runIn(t, dir, "run", "-q", "--report-dir", "suite", "ok.cue", "bad.cue"); code != 1 {
		t.Fatalf("run of the suite: exit %d, want 1 (bad fails)\n%s", code, out)
	}
	if edit != nil {
		edit(dir)
	}
	if code, out := runIn(t, dir, append(append([]string{"run", "-q", "--report-dir", "alone"}, args...), "bad.cue")...); code != 0 {
		t.Fatalf("run of bad alone: exit %d, want 0\n%s", code, out)
	}
	m := filepath.Join(dir, "m")
	if err := os.CopyFS(m, os.DirFS(filepath.Join(dir, "suite"))); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(m, "*_bad_*"))
	for _, f := range old {
		os.RemoveAll(f)
	}
	oks, _ := filepath.Glob(filepath.Join(m, "*_ok_*[0-9a-f].json"))
	alone, _ := filepath.Glob(filepath.Join(dir, "alone", "*_bad_*[0-9a-f].json"))
	if len(oks) != 1 || len(alone) != 1 {
		t.Fatalf("records: ok %v, bad alone %v", oks, alone)
	}
	rec := readJSON(t, alone[0])
	rec["invocation"] = readJSON(t, oks[0])["invocation"]
	stand := filepath.Join(m, filepath.Base(alone[0]))
	if err := os.CopyFS(strings.TrimSuffix(stand, ".json"), os.DirFS(strings.TrimSuffix(alone[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, stand, rec)
	if err := resealRecord(stand); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSuiteRunReplacedByAnotherRun: a suite's failed run replaced by a passed run of the same
// scenario made by another labrun run, with the suite's invocation copied into it (the seal
// computed again). Its invocation named the scenario and its count of runs, which the stand-in
// matched: before, merge said "2 passed", exit 0. The invocation keeps the sources its
// scenarios ran from and the names of its --vars, and merge refuses (exit 2) a record of it
// given a --var it was not, or run from another source.
func TestSuiteRunReplacedByAnotherRun(t *testing.T) {
	t.Run("given --var", func(t *testing.T) {
		dir := suiteWithStandIn(t, nil, "--var", "word=hello")
		refused(t, dir, []string{"the labrun run whose invocation it keeps", "did not make it: it says --var gave its run word, which that run was not given (no --var)"}, "merge", "-q", "--report-dir", "out", "m")
	})
	t.Run("another source", func(t *testing.T) {
		dir := suiteWithStandIn(t, func(dir string) {
			b, err := os.ReadFile(filepath.Join(dir, "bad.cue"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "bad.cue"), strings.Replace(string(b), `*"bye"`, `*"hello"`, 1))
		})
		refused(t, dir, []string{"did not make it: that run ran ", "bad.cue bad from source ", "and its record is of a run from source "}, "merge", "-q", "--report-dir", "out", "m")
	})
}

// TestSummaryRunsTakenOutWithItsPlan: a summary is written from its matrix, which each run's
// record beside it keeps. A sweep's failed combination (or a --count's failed round) taken out
// of its summary with its planned runs and combinations or count made fewer (its sweep's
// values too), the records of the other runs beside it, read "2 of 2 runs passed", verdict
// passed: labrun diff of it and another run's summary said "verdict changed: failed →
// passed". It is refused (exit 2), naming the plan its runs' records hold.
func TestSummaryRunsTakenOutWithItsPlan(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		args      []string
		edit      func(s map[string]any)
		want      string
	}{
		{"sweep", `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	vars: n: *1 | int
	sweep: n: [1, 2, 3]
	steps: [{name: "x", exec: argv: ["echo", "\(vars.n)"]}]
	expect: ["int(trim(x.stdout)) < 3"]
}
`, nil, func(s map[string]any) {
			s["combinations"], s["planned"] = 2, 2
			s["sweep"].([]any)[0].(map[string]any)["values"] = []any{"1", "2"}
		}, "it plans 2 runs (2 combinations of n = 1, 2 × 1), every run must pass, but its run s[n=1]#1's record "},
		{"count", `package lab

import "labrun.dev/schema"

// Its third run fails: each run counts itself in the file c.
s: schema.#Scenario & {
	steps: [{name: "x", exec: argv: ["sh", "-c", "n=$(($(cat c 2>/dev/null || echo 0) + 1)); echo $n > c; echo $n"]}]
	expect: ["int(trim(x.stdout)) < 3"]
}
`, []string{"--count", "3"}, func(s map[string]any) {
			s["count"], s["planned"] = 2, 2
		}, "it plans 2 runs (1 combination × 2), every run must pass, but its run s#1's record "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			writeIn(t, filepath.Join(dir, "s.cue"), tc.src)
			var sums [2]string
			for i, d := range []string{"a", "b"} {
				os.Remove(filepath.Join(dir, "c"))
				if code, out := runIn(t, dir, append(append([]string{"run", "-q", "--report-dir", d}, tc.args...), "s.cue")...); code != 1 {
					t.Fatalf("run: exit %d, want 1 (its third run fails)\n%s", code, out)
				}
				ss, _ := filepath.Glob(filepath.Join(dir, d, "*.summary.json"))
				if len(ss) != 1 {
					t.Fatalf("summaries in %s: %v", d, ss)
				}
				sums[i] = ss[0]
			}
			s := readJSON(t, sums[1])
			runs := s["runs"].([]any)
			if runs[2].(map[string]any)["outcome"] != "failed" {
				t.Fatalf("the third run of the summary did not fail: %v", runs[2])
			}
			s["runs"], s["passed"], s["verdict"] = runs[:2], 2, "passed"
			tc.edit(s)
			writeJSON(t, sums[1], s)
			refused(t, dir, []string{tc.want, "the summary was changed after it was written or is corrupt"}, "diff", sums[0], sums[1])
		})
	}
}

// TestSuiteRunReplacedByAnOlderRun: a suite's failed run replaced by the passed record of an
// older labrun run of the same scenario, from the same source and with the same vars (it
// passed while the file it reads said ok), the suite's invocation copied into it (the seal
// computed again): before, merge said "2 passed", exit 0. The invocation keeps when it began
// its runs, and merge refuses (exit 2) a record of it that started before.
func TestSuiteRunReplacedByAnOlderRun(t *testing.T) {
	dir, ok, older := suiteWithOtherPassedFl(t, "old", true, "fl.cue", "ok.cue")
	rec := readJSON(t, older)
	rec["invocation"] = readJSON(t, ok)["invocation"]
	stand := standInFor(t, dir, older, rec)
	if err := resealRecord(stand); err != nil {
		t.Fatal(err)
	}
	refused(t, dir, []string{"did not make it: it started at ", "before that run began its runs at "}, "merge", "-q", "--report-dir", "out", "m")
}

// suiteWithOtherPassedFl makes, in a new folder that it returns (the test's working folder),
// a suite (`labrun run` of suite into m/) whose fl failed, its records taken out of m/, and
// another labrun run of fl into other/ that passed (the file fl reads said ok): before the
// suite when otherFirst, after it otherwise. It returns the paths of the suite's ok record
// and of the other run's fl record: a test makes a stand-in of the latter (standInFor).
func suiteWithOtherPassedFl(t *testing.T, other string, otherFirst bool, suite ...string) (dir, ok, fl string) {
	t.Helper()
	dir = t.TempDir()
	t.Chdir(dir)
	writeIn(t, filepath.Join(dir, "fl.cue"), flCUE)
	writeIn(t, filepath.Join(dir, "ok.cue"), okCUE)
	runOther := func() {
		writeFile(t, filepath.Join(dir, "state"), "ok\n")
		if code, out := runIn(t, dir, "run", "-q", "--report-dir", other, "fl.cue"); code != 0 {
			t.Fatalf("the other run: exit %d, want 0\n%s", code, out)
		}
	}
	if otherFirst {
		runOther()
	}
	writeFile(t, filepath.Join(dir, "state"), "broken\n")
	if code, out := runIn(t, dir, append([]string{"run", "-q", "--report-dir", "m"}, suite...)...); code != 1 {
		t.Fatalf("the suite: exit %d, want 1 (fl fails)\n%s", code, out)
	}
	if !otherFirst {
		runOther()
	}
	failed, _ := filepath.Glob(filepath.Join(dir, "m", "*_fl_*"))
	for _, f := range failed {
		os.RemoveAll(f)
	}
	oks, _ := filepath.Glob(filepath.Join(dir, "m", "*_ok_*[0-9a-f].json"))
	fls, _ := filepath.Glob(filepath.Join(dir, other, "*_fl_*[0-9a-f].json"))
	if len(oks) != 1 || len(fls) != 1 {
		t.Fatalf("records: ok %v, fl of %s %v", oks, other, fls)
	}
	return dir, oks[0], fls[0]
}

// standInFor writes rec, the record fl of another run edited, into the suite's folder m/ under
// fl's name, with a copy of fl's artifacts, and returns its path (its seal not computed again).
func standInFor(t *testing.T, dir, fl string, rec map[string]any) string {
	t.Helper()
	stand := filepath.Join(dir, "m", filepath.Base(fl))
	if err := os.CopyFS(strings.TrimSuffix(stand, ".json"), os.DirFS(strings.TrimSuffix(fl, ".json"))); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, stand, rec)
	return stand
}

// TestDiffJudgesEditedRecord: labrun diff of a run's record and a copy of it edited into a
// pass (its outcome and its expectation's, its data and artifacts untouched, the seal computed
// again), which replay and merge refuse, showed "outcome failed → passed" and "verdict
// changed: failed → passed", as if the run had passed over the same stdout. diff judges each
// record again over its own data, as merge does, and refuses (exit 2) the edited one.
func TestDiffJudgesEditedRecord(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "hi", exec: argv: ["echo", "bye"]}]
	expect: ["hi.stdout == \"hello\\n\""]
}
`, 1)
	passedAs(rec, nil)
	editedSealed(t, dir, rec, nil)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	refused(t, dir, []string{"m/edited.json: run s#1: the record says passed; its data says failed", "diff compares no run from it"}, "diff", recs[0], filepath.Join("m", "edited.json"))
}

// TestSummaryRunLinkedToAnotherRunsRecord: a summary's failed run edited to passed, its report
// linked to the passed record of that combination made by another labrun run (its outcome,
// expectations and values that record's): each run was what its record beside the summary
// said, and each record held, so labrun diff said "verdict changed: failed → passed". The
// runs of one matrix are of one labrun run; diff refuses (exit 2) a summary whose records are
// parts of several.
func TestSummaryRunLinkedToAnotherRunsRecord(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeIn(t, filepath.Join(dir, "s.cue"), stateSweepCUE)
	summaryOf := func(d string) string {
		ss, _ := filepath.Glob(filepath.Join(dir, d, "*.summary.json"))
		if len(ss) != 1 {
			t.Fatalf("summaries in %s: %v", d, ss)
		}
		return ss[0]
	}
	for _, r := range []struct {
		dir, state string
		code       int
	}{{"old", "ok\n", 0}, {"a", "broken\n", 1}, {"b", "broken\n", 1}} {
		writeFile(t, filepath.Join(dir, "state"), r.state)
		if code, out := runIn(t, dir, "run", "-q", "--report-dir", r.dir, "s.cue"); code != r.code {
			t.Fatalf("run into %s: exit %d, want %d\n%s", r.dir, code, r.code, out)
		}
	}
	older, _ := filepath.Glob(filepath.Join(dir, "old", "*_s_*[0-9a-f].json"))
	var passed map[string]any
	var passedAt string
	for _, f := range older {
		if rec := readJSON(t, f); rec["unit"].(map[string]any)["id"] == "s[n=2]#1" {
			passed, passedAt = rec, f
		}
	}
	if passed == nil {
		t.Fatalf("no record of s[n=2]#1 among %v", older)
	}
	sum := summaryOf("b")
	s := readJSON(t, sum)
	run := s["runs"].([]any)[1].(map[string]any)
	if run["id"] != "s[n=2]#1" || run["outcome"] != "failed" {
		t.Fatalf("the summary's second run is not s[n=2]#1 failed: %v", run)
	}
	e := passed["expectations"].([]any)[0].(map[string]any)
	run["outcome"], run["expectations"], run["values"] = "passed", map[string]any{e["expr"].(string): "passed"}, e["values"]
	run["report"] = "../old/" + strings.TrimSuffix(filepath.Base(passedAt), ".json") + ".html"
	s["passed"], s["verdict"] = 2, "passed"
	writeJSON(t, sum, s)
	refused(t, dir, []string{"s.cue s are of 2 labrun runs, and hold only part of the runs of it of each: 1 of the 2 runs of labrun run ", "(s[n=2]#1)", "a record of another run stands for one of the run the others are of; the summary was changed after it was written"}, "diff", summaryOf("a"), sum)
}

// TestMergeRecordOfAnotherRunsCombination: a sweep's failed combination's record replaced by
// the passed record of that combination from another labrun run — no edit: every record and
// seal as the runs wrote them — merged as "2 of 2 runs passed", exit 0. Each labrun run makes
// every run of a scenario it runs: merge refuses (exit 2) records of one scenario that are
// parts of several labrun runs; the stand-in with its invocation taken out (the seal computed
// again), read as a run alone, is a part of its own.
func TestMergeRecordOfAnotherRunsCombination(t *testing.T) {
	for _, strip := range []bool{false, true} {
		t.Run(fmt.Sprintf("invocation taken out %v", strip), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			writeIn(t, filepath.Join(dir, "s.cue"), stateSweepCUE)
			for _, r := range []struct {
				dir, state string
				code       int
			}{{"old", "ok\n", 0}, {"new", "broken\n", 1}} {
				writeFile(t, filepath.Join(dir, "state"), r.state)
				if code, out := runIn(t, dir, "run", "-q", "--report-dir", r.dir, "s.cue"); code != r.code {
					t.Fatalf("run into %s: exit %d, want %d\n%s", r.dir, code, r.code, out)
				}
			}
			// m: the new run's record of n=1, the old run's of n=2, each with its folder.
			for _, from := range []struct{ dir, id string }{{"new", "s[n=1]#1"}, {"old", "s[n=2]#1"}} {
				recs, _ := filepath.Glob(filepath.Join(dir, from.dir, "*_s_*[0-9a-f].json"))
				for _, f := range recs {
					rec := readJSON(t, f)
					if rec["unit"].(map[string]any)["id"] != from.id {
						continue
					}
					to := filepath.Join(dir, "m", filepath.Base(f))
					if err := os.CopyFS(strings.TrimSuffix(to, ".json"), os.DirFS(strings.TrimSuffix(f, ".json"))); err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, to, string(b))
					if strip && from.dir == "old" {
						delete(rec, "invocation")
						writeJSON(t, to, rec)
						if err := resealRecord(to); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			want := []string{"the records of ", "s.cue s are of 2 labrun runs, and hold only part of the runs of it of each: 1 of the 2 runs of labrun run ", "(s[n=1]#1)"}
			if strip {
				want = append(want, "s[n=2]#1, of a record that keeps no invocation")
			} else {
				want = append(want, "(s[n=2]#1)")
			}
			refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
		})
	}
}

// flCUE is a scenario that passes while the file state, in its folder, says ok.
const flCUE = `package lab

import "labrun.dev/schema"

// Passes while the file state says ok.
fl: schema.#Scenario & {
	steps: [{name: "st", exec: argv: ["cat", "state"]}]
	expect: ["st.stdout == \"ok\\n\""]
}
`
