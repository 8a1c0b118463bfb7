package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/report"
)

// shardSuite writes 9 scenarios of the local target into dir: eight that pause 10 to 80 ms
// and run a command, and one that sweeps n over 1, 2, 3 (11 runs in all). None holds a fixed
// address, so the shards are balanced by planned span alone.
func shardSuite(t testing.TB, dir string) {
	t.Helper()
	for i := 1; i <= 8; i++ {
		src := fmt.Sprintf(`package lab

import "labrun.dev/schema"

s%d: schema.#Scenario & {
	doc: "a pause of %d0 ms, then a command"
	steps: [
		{name: "pause", sleep: "%d0ms"},
		{name: "hi", exec: argv: ["echo", "s%d"]},
	]
	expect: ["hi.stdout == \"s%d\\n\""]
}
`, i, i, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.cue", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sweep := `package lab

import "labrun.dev/schema"

sweep: schema.#Scenario & {
	doc:   "a pause of n × 10 ms, then a command that prints n"
	vars:  n: *1 | int
	sweep: n: [1, 2, 3]
	steps: [
		{name: "pause", sleep: "\(vars.n*10)ms"},
		{name: "hi", exec: argv: ["echo", "\(vars.n)"]},
	]
	expect: ["hi.stdout == \"\(vars.n)\\n\""]
}
`
	if err := os.WriteFile(filepath.Join(dir, "sweep.cue"), []byte(sweep), 0o644); err != nil {
		t.Fatal(err)
	}
}

// labrunIn runs labrun's Main in dir with args, in this process; it returns the exit code,
// stdout and stderr.
func labrunIn(t testing.TB, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	sigs := make(chan os.Signal)
	p := &process{Args: args, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Cwd: dir,
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }, sources: &sourceHashes{}}
	code := Main(p)
	return code, out.String(), errOut.String()
}

// unitIDs are the unit ids of the records in dir.
func unitIDs(t testing.TB, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var ids []string
	for _, f := range files {
		if strings.HasSuffix(f, ".summary.json") {
			continue
		}
		rec, err := report.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Unit.ID)
	}
	return ids
}

// summaryRows are a summary's rows as they compare between runs: id, vars, verdict and each
// expectation's verdict (the times differ).
func summaryRows(t testing.TB, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.summary.json"))
	if len(files) != 1 {
		t.Fatalf("%s: summaries %v, want 1", dir, files)
	}
	s, err := report.ReadSummary(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{fmt.Sprintf("%s: %d of %d passed, %s", s.Scenario, s.Passed, s.Planned, s.Verdict)}
	for _, r := range s.Runs {
		rows = append(rows, fmt.Sprintf("%s %s %d/%d %s %v %v", r.ID, report.Combo(r.Vars, r.Round, s.Count), r.Combination, r.Round, r.Outcome, r.Expectations, r.Values))
	}
	return rows
}

// junitCounts are the suites and test cases of a JUnit file, and the names of its suites.
func junitCounts(t testing.TB, path string) (tests int, suites []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Suites {
		tests += len(s.Cases)
		suites = append(suites, s.Name)
	}
	return tests, suites
}

// TestShardsMergeAsOneRun: for n = 1..4, run --shard i/n over a folder of 9 scenarios (one
// sweeping: 11 runs) runs each run exactly once over the n shards, and labrun merge of the
// shards' records gives the summary rows, the JUnit test count and suites, and the verdict
// lines of one unsharded run. Real runs on the local target (a sleep and a real echo each);
// about 4 s.
// TestRunJUnitRelativeToCwd: a relative --junit names a file in the process's working
// directory (as --report-dir does), not in the directory the binary happened to start in.
func TestRunJUnitRelativeToCwd(t *testing.T) {
	dir := t.TempDir()
	shardSuite(t, dir)
	if _, err := os.Stat("rel.xml"); err != nil { // never remove a file the test did not write
		t.Cleanup(func() { os.Remove("rel.xml") })
	}
	code, out, errOut := labrunIn(t, dir, "run", "-q", "--report-dir", "r", "--junit", "rel.xml", dir)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if tests, _ := junitCounts(t, filepath.Join(dir, "rel.xml")); tests == 0 {
		t.Errorf("%s holds no test case", filepath.Join(dir, "rel.xml"))
	}
	if _, err := os.Stat("rel.xml"); err == nil {
		t.Errorf("--junit rel.xml was written in the test's own directory, not the process's Cwd")
	}
}

func TestShardsMergeAsOneRun(t *testing.T) {
	dir := t.TempDir()
	shardSuite(t, dir)
	code, out, errOut := labrunIn(t, dir, "run", "-q", "--report-dir", "one", "--junit", filepath.Join(dir, "one.xml"), dir)
	if code != exitOK {
		t.Fatalf("unsharded run: exit %d\n%s%s", code, out, errOut)
	}
	all := unitIDs(t, filepath.Join(dir, "one"))
	slices.Sort(all)
	if len(all) != 11 {
		t.Fatalf("unsharded run made %d records, want 11: %v", len(all), all)
	}
	wantRows := summaryRows(t, filepath.Join(dir, "one"))
	wantTests, wantSuites := junitCounts(t, filepath.Join(dir, "one.xml"))
	wantLines := verdictLines(out)
	if len(wantLines) != 10 {
		t.Fatalf("one run's verdict lines: %q, want 9 scenarios and the total", wantLines)
	}
	for n := 1; n <= 4; n++ {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			var dirs, got []string
			for i := 1; i <= n; i++ {
				d := fmt.Sprintf("shard-%d-of-%d", i, n)
				code, out, errOut := labrunIn(t, dir, "run", "-q", "--shard", fmt.Sprintf("%d/%d", i, n), "--report-dir", d, dir)
				if code != exitOK {
					t.Fatalf("shard %d/%d: exit %d\n%s%s", i, n, code, out, errOut)
				}
				if !strings.HasPrefix(out, fmt.Sprintf("shard %d/%d: ", i, n)) {
					t.Errorf("shard %d/%d does not say which runs it holds:\n%s", i, n, out)
				}
				if sums, _ := filepath.Glob(filepath.Join(dir, d, "*.summary.json")); len(sums) > 0 {
					t.Errorf("shard %d/%d wrote a summary of part of a matrix: %v", i, n, sums)
				}
				ids := unitIDs(t, filepath.Join(dir, d))
				if n > 1 && len(ids) == len(all) {
					t.Errorf("shard %d/%d ran every run", i, n)
				}
				got = append(got, ids...)
				dirs = append(dirs, d)
			}
			slices.Sort(got)
			if !slices.Equal(got, all) {
				t.Fatalf("the %d shards ran %v; one run ran %v", n, got, all)
			}
			merged := fmt.Sprintf("merged-%d", n)
			code, out, errOut := labrunIn(t, dir, append([]string{"merge", "-q", "--report-dir", merged, "--junit", merged + ".xml"}, dirs...)...)
			if code != exitOK {
				t.Fatalf("merge: exit %d\n%s%s", code, out, errOut)
			}
			if errOut != "" {
				t.Errorf("merge wrote to stderr:\n%s", errOut)
			}
			if rows := summaryRows(t, filepath.Join(dir, merged)); !slices.Equal(rows, wantRows) {
				t.Errorf("merged summary rows:\n%s\none run's:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
			}
			tests, suites := junitCounts(t, filepath.Join(dir, merged+".xml"))
			if tests != wantTests || !slices.Equal(suites, wantSuites) {
				t.Errorf("merged JUnit: %d tests in suites %v; one run's: %d in %v", tests, suites, wantTests, wantSuites)
			}
			if lines := verdictLines(out); !slices.Equal(lines, wantLines) {
				t.Errorf("merge's verdict lines:\n%s\none run's:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
			}
		})
	}
}

// verdictLines are the lines of a run's or merge's output that say how each scenario and the
// whole ended, without the paths of reports.
func verdictLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && (f[0] == "PASSED" || f[0] == "FAILED") && strings.HasPrefix(l, "  "):
			lines = append(lines, strings.Join(f[:2], " ")+" "+strings.Join(slices.DeleteFunc(f[2:], func(s string) bool { return strings.Contains(s, "/") }), " "))
		case strings.Contains(l, " scenarios: "):
			lines = append(lines, l)
		}
	}
	return lines
}

// TestMergeRefusesMixedSources: records of one scenario run from two versions of its file are
// refused, naming the scenario and the folders of each source; --allow-mixed-sources merges
// them.
func TestMergeRefusesMixedSources(t *testing.T) {
	dir := t.TempDir()
	shardSuite(t, dir)
	s1 := filepath.Join(dir, "s1.cue")
	// Both runs are of one plan (--count 2): a plain run's s1#1 and a --count 2's are runs of
	// different experiments, refused whatever their sources (merge_plain_and_count.txtar).
	if code, out, errOut := labrunIn(t, dir, "run", "-q", "--report-dir", "before", "--count", "2", s1); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, _ := os.ReadFile(s1)
	if err := os.WriteFile(s1, bytes.Replace(b, []byte("10ms"), []byte("15ms"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := labrunIn(t, dir, "run", "-q", "--report-dir", "after", "--count", "2", s1); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut := labrunIn(t, dir, "merge", "--report-dir", "m", "before", "after")
	if code != exitInvalid || !regexp.MustCompile(`^labrun: merge: scenario s1 \(\S+/s1\.cue\) was run from 2 different sources: [0-9a-f]{12} in before/\S+\.json, before/\S+\.json; [0-9a-f]{12} in after/\S+\.json, after/\S+\.json\n`).MatchString(errOut) {
		t.Errorf("merge of two sources: exit %d, stderr:\n%s", code, errOut)
	}
	// The runs s1#1 and s1#2 are in both: the later are kept, and the warnings say they are of
	// two sources; the records kept are of the file as it is now, so all are judged again.
	code, out, errOut := labrunIn(t, dir, "merge", "-q", "--allow-mixed-sources", "--report-dir", "m", "before", "after")
	if code != exitOK || !regexp.MustCompile(`^(labrun: merge: warning: two records of run s1#[12] from different sources \(before/\S+\.json, after/\S+\.json\): keeping the later one, from after/\S+\.json\n){2}$`).MatchString(errOut) {
		t.Errorf("--allow-mixed-sources: exit %d\n%s%s", code, out, errOut)
	}
}

// TestMergeReadsVersion1Records: records made before records kept their source (version 1,
// docs/records) merge without the source check, and a JSON-lines file (labrun run -o json's
// stdout, with other lines among them) is read too.
func TestMergeReadsVersion1Records(t *testing.T) {
	records, err := filepath.Abs(filepath.Join("..", "..", "docs", "records"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, out, errOut := labrunIn(t, dir, "merge", "-q", "--report-dir", "", records)
	if code != exitOK || !strings.Contains(out, "2 scenarios: 2 passed, 0 failed, 0 errors (2 runs)") {
		t.Errorf("merge of docs/records: exit %d\n%s%s", code, out, errOut)
	}
	shardSuite(t, dir)
	code, out, errOut = labrunIn(t, dir, "run", "-q", "--report-dir", "", "-o", "json", filepath.Join(dir, "sweep.cue"))
	if code != exitOK {
		t.Fatalf("run -o json: exit %d\n%s", code, errOut)
	}
	lines := "labrun: a line that is not a record\n" + out + "{\"not\": \"a record\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "pod.log"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = labrunIn(t, dir, "merge", "-q", "--report-dir", "m", "pod.log")
	if code != exitOK || !strings.Contains(out, "SUMMARY sweep: 3 of 3 runs passed") {
		t.Errorf("merge of JSON lines: exit %d\n%s%s", code, out, errOut)
	}
	if mds, _ := filepath.Glob(filepath.Join(dir, "m", "*_sweep_*.md")); len(mds) != 4 {
		t.Errorf("reports written from the JSON lines, and the summary: %v", mds)
	}
}
