package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ok2CUE passes, as okCUE does, under another scenario name: a suite of two passing scenarios.
const ok2CUE = `package lab

import "labrun.dev/schema"

ok2: schema.#Scenario & {
	steps: [{name: "hi", exec: argv: ["echo", "hello"]}]
	expect: ["hi.stdout == \"hello\\n\""]
}
`

// otherBuild writes the records of folder as made by another labrun build, their seals
// computed again.
func otherBuild(t *testing.T, folder string) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(folder, "*[0-9a-f].json"))
	if len(recs) == 0 {
		t.Fatalf("no records in %s", folder)
	}
	for _, f := range recs {
		rec := readJSON(t, f)
		if rec["labrun"] == nil || rec["labrun"] == "" {
			t.Errorf("%s names no labrun build", f)
		}
		rec["labrun"] = "v0.9.0 0123456789abcdef0123456789abcdef01234567"
		writeJSON(t, f, rec)
		if err := resealRecord(f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMergeRecordsOfTwoBuilds: records keep the labrun build that made them (labrun: version,
// revision, "modified"). Before, records kept none, and the records of one labrun run, or the
// shards of one split, made by two labrun builds (or one record of another build standing in
// for one of the run's, its invocation copied) merged as "2 passed", exit 0. Merge refuses
// them (exit 2); the records of separate runs made by two builds merge, with a warning.
func TestMergeRecordsOfTwoBuilds(t *testing.T) {
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		t.Chdir(dir)
		writeIn(t, filepath.Join(dir, "ok.cue"), okCUE)
		writeIn(t, filepath.Join(dir, "ok2.cue"), ok2CUE)
		return dir
	}
	run := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		if code, out := runIn(t, dir, append([]string{"run", "-q"}, args...)...); code != 0 {
			t.Fatalf("run %v: exit %d\n%s", args, code, out)
		}
	}
	t.Run("one labrun run", func(t *testing.T) {
		dir := setup(t)
		run(t, dir, "--report-dir", "suite", "ok.cue", "ok2.cue")
		recs, _ := filepath.Glob(filepath.Join(dir, "suite", "*_ok2_*[0-9a-f].json"))
		if len(recs) != 1 {
			t.Fatalf("records of ok2: %v", recs)
		}
		rec := readJSON(t, recs[0])
		rec["labrun"] = "v0.9.0 0123456789abcdef0123456789abcdef01234567"
		writeJSON(t, recs[0], rec)
		if err := resealRecord(recs[0]); err != nil {
			t.Fatal(err)
		}
		refused(t, dir, []string{"the records of one labrun run (invocation ", "name 2 labrun builds: ", "v0.9.0 0123456789abcdef0123456789abcdef01234567 in suite/"}, "merge", "-q", "suite")
	})
	t.Run("shards of one split", func(t *testing.T) {
		dir := setup(t)
		run(t, dir, "--report-dir", "sh1", "--shard", "1/2", "ok.cue", "ok2.cue")
		run(t, dir, "--report-dir", "sh2", "--shard", "2/2", "ok.cue", "ok2.cue")
		otherBuild(t, filepath.Join(dir, "sh2"))
		refused(t, dir, []string{"the records of the shards of one split (2 shards, 2 runs) name 2 labrun builds", "run every shard of a split with one labrun build"}, "merge", "-q", "sh1", "sh2")
	})
	t.Run("separate runs", func(t *testing.T) {
		dir := setup(t)
		run(t, dir, "--report-dir", "r1", "ok.cue")
		run(t, dir, "--report-dir", "r2", "ok2.cue")
		otherBuild(t, filepath.Join(dir, "r2"))
		code, out := runIn(t, dir, "merge", "-q", "r1", "r2")
		if code != 0 || !strings.Contains(out, "labrun: merge: warning: the records were made by 2 labrun builds: ") || !strings.Contains(out, "but what each run measured is what its build measured") {
			t.Errorf("merge of two runs of two builds: exit %d, want 0 and a warning naming the builds:\n%s", code, out)
		}
	})
}

// TestSuiteRunReplacedByALaterRun: a suite's failed run replaced by the passed record of a
// later labrun run of the same scenario, from the same source and with the same vars (it
// passed once the file it reads said ok), the suite's invocation copied into it (the seal
// computed again): merge said "2 passed", exit 0 — it started after the invocation's start,
// as the suite's own runs did. The later run is made here at once, and its times moved an
// hour on (start, end, stepsStart: its steps' offsets count from them), as a run made an hour
// after the suite: a labrun run starts each run when it begins or another of its runs ends,
// so merge refuses (exit 2) a record of it that started more than 5 minutes after none of its
// runs was running.
func TestSuiteRunReplacedByALaterRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shift time.Duration
		code  int
	}{{"an hour later", time.Hour, 2}, {"at once", 0, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ok, later := suiteWithOtherPassedFl(t, "later", false, "ok.cue", "fl.cue")
			rec := readJSON(t, later)
			rec["invocation"] = readJSON(t, ok)["invocation"]
			for _, k := range []string{"start", "end", "stepsStart"} {
				at, err := time.Parse(time.RFC3339Nano, rec[k].(string))
				if err != nil {
					t.Fatal(err)
				}
				rec[k] = at.Add(tc.shift).Format(time.RFC3339Nano)
			}
			stand := standInFor(t, dir, later, rec)
			if err := resealRecord(stand); err != nil {
				t.Fatal(err)
			}
			if tc.code == 2 {
				refused(t, dir, []string{"after the labrun run whose invocation it keeps", "last had a run running (the end of m/", "a record of a later run of its scenario stands for the one that run made"}, "merge", "-q", "--report-dir", "out", "m")
				return
			}
			// Made within the 5 minutes: not told from the suite's own (docs/json.md says so).
			if code, out := runIn(t, dir, "merge", "-q", "--report-dir", "out", "m"); code != tc.code {
				t.Errorf("merge: exit %d, want %d\n%s", code, tc.code, out)
			}
		})
	}
}
