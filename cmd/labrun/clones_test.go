package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/report"
)

// fixtureRecords are the records under testdata/clones/dir (README.md there says which runs
// wrote them), decoded, in the order of their file names.
func fixtureRecords(t *testing.T, dir string) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "clones", dir, "*.json"))
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatalf("no records in testdata/clones/%s", dir)
	}
	var out []map[string]any
	for _, f := range files {
		out = append(out, readJSON(t, f))
	}
	return out
}

// copyAsRound is a deep copy of rec with its unit's round and id those of round n.
func copyAsRound(t *testing.T, rec map[string]any, n int) map[string]any {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	u := c["unit"].(map[string]any)
	id := u["id"].(string)
	u["round"], u["id"] = float64(n), id[:strings.LastIndex(id, "#")+1]+fmt.Sprint(n)
	return c
}

// moveTime moves the RFC 3339 time m[k], when m holds one, by d.
func moveTime(t *testing.T, m map[string]any, k string, d time.Duration) {
	t.Helper()
	s, ok := m[k].(string)
	if !ok {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	m[k] = at.Add(d).Format(time.RFC3339Nano)
}

// moveRun moves the instants rec's run started, its steps started and it ended by d, and so
// every time its results hold (a load's start and end, a snapshot's instant), which are
// instants too.
func moveRun(t *testing.T, rec map[string]any, d time.Duration) {
	t.Helper()
	for _, k := range []string{"start", "stepsStart", "end"} {
		moveTime(t, rec, k, d)
	}
	for name := range rec["results"].(map[string]any) {
		moveResult(t, rec, name, d)
	}
}

// moveResult moves the times the result name of rec holds by d.
func moveResult(t *testing.T, rec map[string]any, name string, d time.Duration) {
	t.Helper()
	res, _ := rec["results"].(map[string]any)[name].(map[string]any)
	if v, ok := res["value"].(map[string]any); ok {
		for _, k := range []string{"start", "end", "at"} {
			moveTime(t, v, k, d)
		}
	}
}

// moveSteps moves each step of rec (its planned, start and end offsets) by by(i), i its
// place in the record, and the times of its result by as much, so that the record still
// agrees with itself.
func moveSteps(t *testing.T, rec map[string]any, by func(i int) time.Duration) {
	t.Helper()
	for i, s := range rec["steps"].([]any) {
		m := s.(map[string]any)
		d := by(i)
		for _, k := range []string{"plannedNs", "startNs", "endNs"} {
			m[k] = m[k].(float64) + float64(d)
		}
		if name, ok := m["name"].(string); ok {
			moveResult(t, rec, name, d)
		}
	}
}

// TestMergeRefusesOneRunCountedTwice: merge refused two records of one run (a record copied
// with its unit's id and round edited) only when every time in the copy was the first's
// moved by one constant: a copy whose steps were each moved by an amount of their own, or
// whose results' times were edited, merged, and "2 of 2 runs passed" was said where one
// ran. The check now rests first on what no two runs share, their loads' timings of their
// requests; the records of real runs (testdata/clones: two of one process, one of another,
// the six of a sweep run as two shards) still merge.
func TestMergeRefusesOneRunCountedTwice(t *testing.T) {
	count2 := fixtureRecords(t, "count2")
	sh1, sh2 := fixtureRecords(t, "shards/sh1"), fixtureRecords(t, "shards/sh2")
	round1 := count2[0]
	// The load steps' names sort keepalive first: the first load found the same is it.
	keepalive := round1["results"].(map[string]any)["keepalive"].(map[string]any)["value"].(map[string]any)
	sameLoad := fmt.Sprintf("m/0.json (run quickstart#1) and m/1.json (run quickstart#2) are records of one run: the load of their step keepalive timed the same 30 requests in %vs, latency mean %v ms, min %v ms, max %v ms, to the nanosecond",
		keepalive["duration"], keepalive["avg"], keepalive["min"], keepalive["max"])
	const closing = "labrun: merge: one of each two is a copy of the other's record under another run's id (its times edited or not), which would count one run twice; merge counts no run from them: take the copies out and merge the records the runs wrote (a run whose own record is missing must run again to be counted)"
	cases := []struct {
		name string
		recs func(t *testing.T) []map[string]any
		code int
		want []string
	}{
		{
			name: "a: a copy whose steps were each moved by an amount of their own",
			recs: func(t *testing.T) []map[string]any {
				c := copyAsRound(t, round1, 2)
				moveRun(t, c, time.Hour)
				moveSteps(t, c, func(i int) time.Duration { return time.Duration(i+1) * 977 })
				return []map[string]any{round1, c}
			},
			code: exitInvalid,
			want: []string{sameLoad, closing},
		},
		{
			name: "b: a copy whose results' times were edited, its steps moved by one constant",
			recs: func(t *testing.T) []map[string]any {
				c := copyAsRound(t, round1, 2)
				moveRun(t, c, time.Microsecond)
				moveSteps(t, c, func(int) time.Duration { return 1 })
				for i, name := range []string{"a_before", "keepalive", "a_mid", "b_after"} {
					moveResult(t, c, name, time.Duration(i+3))
				}
				return []map[string]any{round1, c}
			},
			code: exitInvalid,
			want: []string{sameLoad, closing},
		},
		{
			name: "a copy of a shard's record in the other shard",
			recs: func(t *testing.T) []map[string]any {
				out := slices.Clone(sh1)
				for _, r := range sh2 {
					u := r["unit"].(map[string]any)
					if u["combination"] == sh1[0]["unit"].(map[string]any)["combination"] && u["round"] != sh1[0]["unit"].(map[string]any)["round"] {
						c := copyAsRound(t, sh1[0], int(u["round"].(float64)))
						c["shard"] = r["shard"]
						moveRun(t, c, time.Millisecond)
						moveSteps(t, c, func(int) time.Duration { return 5 })
						r = c
					}
					out = append(out, r)
				}
				return out
			},
			code: exitInvalid,
			want: []string{"are records of one run: the load of their step load timed the same", closing},
		},
		{
			name: "a copy of a run in an ephemeral namespace, its load's timing edited too",
			recs: func(t *testing.T) []map[string]any {
				orig := copyAsRound(t, sh1[0], 1)
				orig["namespaces"] = map[string]any{"app": "app-3f9c2a71d0"}
				c := copyAsRound(t, orig, 2)
				delete(c, "shard")
				delete(orig, "shard")
				c["results"].(map[string]any)["load"].(map[string]any)["value"].(map[string]any)["avg"] = sh1[0]["results"].(map[string]any)["load"].(map[string]any)["value"].(map[string]any)["avg"].(float64) * 1.0001
				moveRun(t, c, time.Millisecond)
				moveSteps(t, c, func(i int) time.Duration { return time.Duration(i+2) * 31 })
				return []map[string]any{orig, c}
			},
			code: exitInvalid,
			want: []string{"are records of one run: both ran in the ephemeral namespace app-3f9c2a71d0 (ns.app), which a run names after its own random id", closing},
		},
		{
			// A sandbox replays one fortio recording in every run of a scenario: two kube runs
			// record the same load timing, and are two runs all the same.
			name: "two kube runs of one scenario whose loads replayed one recording",
			recs: func(t *testing.T) []map[string]any {
				a, b := copyAsRound(t, count2[0], 1), copyAsRound(t, count2[1], 2)
				for _, r := range []map[string]any{a, b} {
					r["target"] = "kube"
				}
				for name, res := range a["results"].(map[string]any) {
					av, ok := res.(map[string]any)["value"].(map[string]any)
					if !ok || av["max"] == nil {
						continue // not a load
					}
					bv := b["results"].(map[string]any)[name].(map[string]any)["value"].(map[string]any)
					for k, v := range av {
						if k != "start" && k != "end" {
							bv[k] = v
						}
					}
				}
				return []map[string]any{a, b}
			},
			code: exitOK,
			want: []string{"SUMMARY quickstart: 2 of 2 runs passed"},
		},
		{
			name: "c: two runs of run --count 2",
			recs: func(*testing.T) []map[string]any { return count2 },
			code: exitOK,
			want: []string{"SUMMARY quickstart: 2 of 2 runs passed"},
		},
		{
			name: "d: the shards of run --shard",
			recs: func(*testing.T) []map[string]any { return append(slices.Clone(sh1), sh2...) },
			code: exitOK,
			want: []string{"SUMMARY sweep: 6 of 6 runs passed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, rec := range tc.recs(t) {
				writeJSON(t, filepath.Join(dir, "m", fmt.Sprintf("%d.json", i)), rec)
			}
			code, out, errOut := labrunIn(t, dir, "merge", "-q", "--report-dir", "", "m")
			if code != tc.code {
				t.Errorf("merge: exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("merge's output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			if tc.code == exitInvalid && out != "" {
				t.Errorf("a refused merge printed verdicts:\n%s", out)
			}
		})
	}
	// c: every real record against every other, the run of a process of its own among them
	// (merge would drop one of two records of run quickstart#1 as a run retried before this
	// check).
	t.Run("c: every real record against every other", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join("testdata", "clones", "*", "*.json"))
		more, _ := filepath.Glob(filepath.Join("testdata", "clones", "shards", "*", "*.json"))
		var all []mergedRecord
		for _, f := range append(files, more...) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := report.Decode(f, b)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, mergedRecord{rec: rec, from: f, json: f})
		}
		if len(all) != 9 {
			t.Fatalf("%d records in testdata/clones, want 9", len(all))
		}
		if err := (&process{Cwd: "."}).checkClones(all); err != nil {
			t.Errorf("the records of 9 real runs: %v", err)
		}
	})
	if _, err := os.Stat(filepath.Join("testdata", "clones", "README.md")); err != nil {
		t.Errorf("testdata/clones says nowhere which runs wrote its records: %v", err)
	}
}
