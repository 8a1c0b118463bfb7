package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
)

// screen is what a terminal shows of out: the status block's cursor moves (up n lines, back
// to the line's start, erase to the end of the screen) applied, colours left out.
func screen(out string) string {
	rows := []string{""}
	row := 0
	esc := regexp.MustCompile("^\033\\[([0-9;]*)([A-Za-z])")
	for i := 0; i < len(out); {
		if m := esc.FindStringSubmatch(out[i:]); m != nil {
			switch m[2] {
			case "A":
				n, _ := strconv.Atoi(m[1])
				row = max(0, row-max(n, 1))
			case "J":
				rows = rows[:row+1]
				rows[row] = ""
			}
			i += len(m[0])
			continue
		}
		switch out[i] {
		case '\r':
			rows[row] = ""
		case '\n':
			row++
			if row == len(rows) {
				rows = append(rows, "")
			}
		default:
			rows[row] += out[i : i+1]
		}
		i++
	}
	return strings.Join(rows, "\n")
}

// TestConsoleWrapsAtSpaces: on a terminal narrower than a line, the terminal broke the run's
// header, step, expectation, load and delta lines wherever the last column fell, in the middle
// of a number or a name ("p9" / "9 1.385 ms", seen at 120 columns on the quickstart): the
// evidence of a verdict read wrong. Lines longer than the terminal are now broken at spaces,
// each continuation indented under its line, and nothing of them is lost; where the output is
// not a terminal (a pipe, a CI log) every line stays whole.
func TestConsoleWrapsAtSpaces(t *testing.T) {
	dir := t.TempDir()
	spec := `package w

import "labrun.dev/schema"

wrapped_scenario_with_a_long_name: schema.#Scenario & {
	steps: [
		{name: "before_the_load_of_many_requests", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
		{name: "a_load_step_with_a_long_name", load: {url: "http://backend.lab.example.internal:18080/echo?delay=1ms&status=200", requests: 20, connections: 3}},
		{name: "after_the_load_of_many_requests", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
	]
	expect: [
		"delta(\"before_the_load_of_many_requests\", \"after_the_load_of_many_requests\").rq_total <= a_load_step_with_a_long_name.requests",
		"a_load_step_with_a_long_name.code200 == a_load_step_with_a_long_name.requests && a_load_step_with_a_long_name.requests == 20",
	]
}
`
	if err := os.WriteFile(filepath.Join(dir, "w.cue"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same scenario under another name, for two runs at once.
	spec2 := strings.Replace(spec, "wrapped_scenario_with_a_long_name:", "other_wrapped_scenario_with_a_long_name:", 1)
	if err := os.WriteFile(filepath.Join(dir, "w2.cue"), []byte(spec2), 0o644); err != nil {
		t.Fatal(err)
	}
	// --parallel 2: each run prints into a buffer, shown on the terminal when it ends; seen
	// in tmux at 80 columns, its lines were not wrapped and the terminal broke them mid-word
	// ("http://127.0.0.1:37097/echo?statu" / "s=503…", "a micro" / "second").
	for _, c := range []struct {
		terminal bool
		width    int
		parallel bool
	}{{true, 60, false}, {true, 80, false}, {false, 60, false}, {true, 80, true}, {false, 60, true}} {
		var out, errOut bytes.Buffer
		p := testProcess()
		p.Args = []string{"run", "--target", "fake", "--report-dir", "", filepath.Join(dir, "w.cue")}
		if c.parallel {
			p.Args = append(p.Args[:len(p.Args)-1], "--parallel", "2", filepath.Join(dir, "w.cue"), filepath.Join(dir, "w2.cue"))
		}
		p.Stdout, p.Stderr, p.Cwd = &out, &errOut, dir
		p.Getenv = func(string) string { return "" }
		p.IsTerminal = c.terminal
		p.TermWidth = func() int { return c.width }
		if code := Main(p); code != exitOK {
			t.Fatalf("terminal %v width %d parallel %v: exit %d\n%s%s", c.terminal, c.width, c.parallel, code, out.String(), errOut.String())
		}
		shown := screen(out.String())
		longest := 0
		for _, l := range strings.Split(strings.TrimSuffix(shown, "\n"), "\n") {
			n := visibleLen(l)
			longest = max(longest, n)
			word := 0 // the longest word of the line
			for _, w := range strings.Fields(l) {
				word = max(word, visibleLen(w))
			}
			// A word no line holds (a URL) is broken by the terminal wherever it is.
			if c.terminal && n >= c.width && strings.Contains(strings.TrimSpace(l), " ") && word < c.width-16 {
				t.Errorf("terminal of %d columns (parallel %v): a line of %d columns, which the terminal breaks where it falls:\n%s", c.width, c.parallel, n, l)
			}
		}
		if !c.terminal && longest < 100 {
			t.Errorf("not a terminal (parallel %v): lines were broken (longest %d columns):\n%s", c.parallel, longest, shown)
		}
		// Joined again, the lines say what the unbroken ones say: nothing cut.
		flat := strings.Join(strings.Fields(shown), " ")
		for _, want := range []string{
			"▶ wrapped_scenario_with_a_long_name (w.cue:5:1) on fake: in-memory fakes",
			`✓ delta("before_the_load_of_many_requests", "after_the_load_of_many_requests").rq_total (10) <= a_load_step_with_a_long_name.requests (20)`,
			"load a_load_step_with_a_long_name 20 requests · 200×20 · 3 connections · p50 1.5 ms · p99 1.5 ms",
			"delta before_the_load_of_many_requests → after_the_load_of_many_requests (prometheus http://127.0.0.1:1/metrics): rq_total 0 → 10 (+10)",
			"PASSED wrapped_scenario_with_a_long_name",
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("terminal %v width %d: output lacks %q:\n%s", c.terminal, c.width, want, shown)
			}
		}
	}
}

// TestWrapLines: breaks at spaces only, keeps runs of spaces (a load line's alignment), never
// breaks before a separator, leaves a word longer than the line whole, and a line that fits
// (or a width under 19: not a terminal) as it is. A terminal of 40 columns (39 less its last)
// is broken at spaces as a wider one is: it was left to the terminal, which broke numbers.
func TestWrapLines(t *testing.T) {
	for _, c := range []struct {
		in     string
		width  int
		indent int
		want   string
	}{
		{"  load a  30 requests · p50 0.2643 ms · p99 3.184 ms", 40, 4, "  load a  30 requests · p50 0.2643 ms ·\n    p99 3.184 ms"},
		{"  load a  30 requests", 40, 4, "  load a  30 requests"},
		{"  ✓ x == \"a  b\" and a_long_word_here_that_goes_on_and_on", 40, 4, "  ✓ x == \"a  b\" and\n    a_long_word_here_that_goes_on_and_on"},
		// A word no line holds stays after the word before it: the verdict beside the name.
		{"FAILED a_scenario_with_a_name_longer_than_the_whole_line_is in 69ms", 40, 2, "FAILED a_scenario_with_a_name_longer_than_the_whole_line_is\n  in 69ms"},
		{"  ✓ a\n      file.cue:1:2: a reason long enough to be wrapped at forty", 40, 4, "  ✓ a\n      file.cue:1:2: a reason long enough\n        to be wrapped at forty"},
		{"  ✗ (perconn.qps (9.946 1/s) > 1000 ? perconn.p99 < 1 : perconn.code200 (30) == 31) (false)", 39, 4,
			"  ✗ (perconn.qps (9.946 1/s) > 1000 ?\n    perconn.p99 < 1 : perconn.code200\n    (30) == 31) (false)"},
		{"FAILED quickstart in 3.029s — with 1 vet warning: bare-time at x.cue:53:37", 19, 2,
			"FAILED quickstart\n  in 3.029s — with\n  1 vet warning:\n  bare-time at\n  x.cue:53:37"},
		{"a b c d e f g h i j k l m n o p q r s t u v w x y z", 0, 2, "a b c d e f g h i j k l m n o p q r s t u v w x y z"},
		{"    +0.001s \033[32m✓\033[0m flip (dns: gslb.lab.internal → 127.0.0.3) 0s", 50, 14, "    +0.001s \033[32m✓\033[0m flip (dns: gslb.lab.internal →\n              127.0.0.3) 0s"},
	} {
		if got := wrapLines(c.in, c.width, c.indent); got != c.want {
			t.Errorf("wrapLines(%q, %d, %d)\n got %q\nwant %q", c.in, c.width, c.indent, got, c.want)
		}
	}
}

// TestVerdictInterruptedOnce: an interrupted run's verdict line read "INTERRUPTED quickstart in
// 1.73s: interrupted" (seen in tmux after Ctrl-C): the reason only repeated the verdict. A
// reason that says more (interrupted while the target was being created) is kept.
func TestVerdictInterruptedOnce(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"interrupted", "INTERRUPTED s in 1.73s\n"},
		{"interrupted while the target was being created", "INTERRUPTED s in 1.73s: interrupted while the target was being created\n"},
	} {
		var out bytes.Buffer
		p := &process{Stdout: &out, Getenv: func(string) string { return "" }}
		start := time.Unix(1000, 0)
		p.printVerdict(&interp.Record{Scenario: "s", Outcome: interp.Interrupted, Error: c.err, Start: start, End: start.Add(1730 * time.Millisecond)}, "", true)
		if out.String() != c.want {
			t.Errorf("error %q: verdict %q, want %q", c.err, out.String(), c.want)
		}
	}
}

// TestPlanWrapsAtSpaces: labrun plan on a terminal of 80 columns printed its lines whole, and
// the terminal broke them mid-word: the quickstart's doc ("backe" / "nd b"), its then: line
// ("s" / "hut down"), a load's notes ("at" / "10 qps"), the runs table's header ("PLAN" /
// "NED"). Prose lines are wrapped at spaces as run's are; a table's row goes on under its last
// column (or, for a word that column cannot hold, indented under the row). Not a terminal:
// every line whole.
func TestPlanWrapsAtSpaces(t *testing.T) {
	dir := t.TempDir()
	spec := `package w

import "labrun.dev/schema"

wrapped_plan: schema.#Scenario & {
	doc: "a doc long enough to need more than one line of a terminal eighty columns wide, with words"
	vars: {requests: 20, connections: 3}
	sweep: connections: [1, 2]
	steps: [
		{name: "before_the_load_of_many_requests", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
		{name: "a_load_step_with_a_long_name", load: {url: "http://backend.lab.example.internal:18080/echo?delay=1ms", requests: vars.requests, connections: vars.connections}},
		{name: "after_the_load_of_many_requests", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
	]
	expect: ["delta.rq_total <= a_load_step_with_a_long_name.requests"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "w.cue"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	checkWrappedAt80(t, dir, exitOK, "plan", filepath.Join(dir, "w.cue"))
}

// checkWrappedAt80 runs labrun with args in dir, not on a terminal and on one of 80 columns, and
// fails where the terminal's lines reach its edge (but for a word of 60 columns or more, which
// no wrapping fits), where the other's were broken, or where the two say something else (but
// for a table's header the wrapped text leaves out: mutate's list has none).
func checkWrappedAt80(t *testing.T, dir string, want int, args ...string) {
	t.Helper()
	var whole string
	for _, terminal := range []bool{false, true} {
		var out, errOut bytes.Buffer
		p := testProcess()
		p.Args = args
		p.Stdout, p.Stderr, p.Cwd = &out, &errOut, dir
		p.Getenv = func(string) string { return "" }
		p.IsTerminal = terminal
		p.TermWidth = func() int { return 80 }
		if code := Main(p); code != want {
			t.Fatalf("terminal %v: exit %d\n%s%s", terminal, code, out.String(), errOut.String())
		}
		longest := 0
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			n := visibleLen(l)
			longest = max(longest, n)
			word := 0
			for _, w := range strings.Fields(l) {
				word = max(word, visibleLen(w))
			}
			if terminal && n >= 80 && word < 60 {
				t.Errorf("terminal of 80 columns: a line of %d columns, which the terminal breaks where it falls:\n%s", n, l)
			}
		}
		if !terminal {
			if longest < 100 {
				t.Errorf("not a terminal: lines were broken (longest %d columns):\n%s", longest, out.String())
			}
			whole = strings.Join(strings.Fields(out.String()), " ")
		} else if got := strings.Join(strings.Fields(out.String()), " "); got != whole && got != strings.Replace(whole, " MUTANT VERDICT", "", 1) {
			t.Errorf("wrapped, %s says something else:\n%s\nwant (joined)\n%s", args[0], got, whole)
		}
	}
}

// TestDiagnosticsWrapAtSpaces: vet's and run's lint warnings and load errors went to stderr
// whole, and a terminal of 80 columns broke them where its last column fell ("fort" /
// "io.requests + fortio.connections", seen in tmux). On a terminal they are now broken at
// spaces, each continuation indented; where stderr is not a terminal (an editor, a script
// reading file:line:col) every finding stays on one line.
func TestDiagnosticsWrapAtSpaces(t *testing.T) {
	dir := t.TempDir()
	spec := `package w

import "labrun.dev/schema"

dur: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo", duration: "1s", connections: 4}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.code200 > 0 && fortio.requests == delta.rq_total"]
}
`
	bad := strings.Replace(spec, `delta.rq_total"`, `delta.rq_totl"`, 1)
	for name, src := range map[string]string{"warn.cue": spec, "err.cue": bad} {
		os.Mkdir(filepath.Join(dir, strings.TrimSuffix(name, ".cue")), 0o755)
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".cue"), name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		file, want string
	}{
		{"warn/warn.cue", "warn/warn.cue:12:11: warning[warmup-uncounted]: delta.rq_total == fortio.requests"},
		{"err/err.cue", `err/err.cue:12:59: dur.expect.0: in expression "fortio.code200 > 0`},
	} {
		var whole string
		for _, width := range []int{0, 80} {
			var out, errOut bytes.Buffer
			p := testProcess()
			p.Args = []string{"vet", filepath.Join(dir, c.file)}
			p.Stdout, p.Stderr, p.Cwd = &out, &errOut, dir
			p.Getenv = func(string) string { return "" }
			p.StderrWidth = func() int { return width }
			Main(p)
			lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
			if !strings.HasPrefix(strings.Join(strings.Fields(errOut.String()), " "), c.want) {
				t.Fatalf("%s, stderr of width %d: got\n%s\nwant a line starting %q", c.file, width, errOut.String(), c.want)
			}
			if width == 0 {
				if visibleLen(lines[0]) < 200 {
					t.Errorf("%s, stderr not a terminal: the finding was broken:\n%s", c.file, errOut.String())
				}
				whole = strings.Join(strings.Fields(errOut.String()), " ")
				continue
			}
			for _, l := range lines {
				if visibleLen(l) >= width {
					t.Errorf("%s, stderr a terminal of %d columns: a line of %d columns, which the terminal breaks where it falls:\n%s", c.file, width, visibleLen(l), l)
				}
			}
			if got := strings.Join(strings.Fields(errOut.String()), " "); got != whole {
				t.Errorf("%s: wrapped, stderr says something else:\n%s\nwant (joined)\n%s", c.file, got, whole)
			}
		}
	}
}

// TestPlanRunsHeaderWhole: labrun plan of examples/sweep.cue at 80 columns printed its runs
// table's rows in 79 columns and its header in 83: "PLANNED" went on alone on the next line
// (seen in tmux), under a ROUND column that said "1 of 1" on every row. A matrix of one run per
// combination has no ROUND column, and its header is one line.
//
// With --count 2 its ROUND column ("1 of 2") made the header 83 columns again: at a width
// the runs table does not fit, it leaves out VARS, which the run's ID says too.
func TestPlanRunsHeaderWhole(t *testing.T) {
	for _, args := range [][]string{{"plan"}, {"plan", "--count", "2"}} {
		planRunsHeaderWhole(t, args)
	}
}

func planRunsHeaderWhole(t *testing.T, args []string) {
	var out, errOut bytes.Buffer
	p := testProcess()
	p.Args = append(args, filepath.Join("..", "..", "examples", "sweep.cue"))
	p.Stdout, p.Stderr = &out, &errOut
	p.Getenv = func(string) string { return "" }
	p.IsTerminal = true
	p.TermWidth = func() int { return 80 }
	if code := Main(p); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	var head string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "  RUN ") {
			head = l
		}
		if strings.TrimSpace(l) == "PLANNED" || strings.Contains(l, "1 of 1") || visibleLen(l) >= 80 {
			t.Errorf("%s: runs table at 80 columns:\n%s", args, out.String())
		}
	}
	if !strings.HasSuffix(head, "PLANNED") {
		t.Errorf("runs table's header %q, want it whole, ending in PLANNED:\n%s", head, out.String())
	}
}

// TestMutateWrapsAtSpaces: labrun mutate on a terminal of 80 columns printed its table's rows
// whole, and the terminal broke them mid-word ("killed by delta(\"a_mid" / "\", \"a_after\")",
// seen in tmux on the quickstart's record). A row goes on under VERDICT, or indented under the
// row for a word that column cannot hold; the score line is wrapped at spaces. Not a terminal:
// every line whole, and the words the same.
func TestMutateWrapsAtSpaces(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the record names its scenario file relative to the repository
	checkWrappedAt80(t, root, exitOK, "mutate", "docs/records/kitb-mode1_strict.json")
}
