package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
)

// TestMalformed runs the labrun binary, built as users get it, with `vet --strict FILE` on every
// experiment of testdata/malformed: mistakes a new user makes (CUE syntax, parameter types,
// names, expression types, values read before they exist, timing, meta-fields, sweeps, Markdown
// documents, local and kube targets), one file per case. A case passes when vet exits 2 and
// prints `FILE:line:col:` at the position its header names, with every expected part of the
// message on that line. A case that vet accepts on the local target is also run (bounded by
// runTimeout): a run that exits 0 is the worst outcome, a mistake that nobody reports.
//
// testdata/malformed/GAPS lists the cases that fail today, each with the part of the work it
// belongs to. The test fails when an unlisted case fails, when a listed case passes (remove
// it from GAPS: the list stays true), and when labrun panics on any case, listed or not. It
// logs the rate: cases rejected with their position and message over all cases.
//
// A case's header (// lines of a .cue file, an <!-- --> block at the top of a .md file):
//
//	// what the mistake is, in a sentence
//	// category: names
//	// target: local            (or kube: vet only, nothing is run)
//	// want: 14:12 delta.rq_totl (line:column of the text; the column may fall anywhere in it,
//	//                             or on the character just before or after it)
//	// msg: rq_total            (a part of the message; a|b accepts either; several msg lines: all)
//	// problems: 1              (optional: vet says exactly this many, no follow-on beside it)
//
// Several want lines are alternatives: a diagnostic at any of them passes; "want: 1:1 (the
// file)" names a position with a note instead of text. Messages quote what they point at, so
// at least one msg line must hold only words the marked text does not: what was expected, the
// name meant. The cases were written as a newcomer writes (examples/, docs/language.md), not
// from labrun's messages; a new one needs no change here.
func TestMalformed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the labrun binary and runs it on every malformed case; skipped with -short")
	}
	const dir = "testdata/malformed"
	cases := readMalformedCases(t, dir)
	gaps := readMalformedGaps(t, filepath.Join(dir, "GAPS"), cases)
	bin := e2ebin.BuildTagged(t, ".", "")

	var mu sync.Mutex
	results := map[string]malformedResult{}
	t.Run("case", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.file, func(t *testing.T) {
				t.Parallel()
				r := c.judge(t, bin)
				mu.Lock()
				results[c.file] = r
				mu.Unlock()
				if r.panicked != "" {
					t.Fatalf("labrun panicked:\n%s", r.panicked)
				}
				gap, listed := gaps[c.file]
				switch {
				case r.ok && listed:
					t.Errorf("listed in GAPS (%s) but passes now: remove its line from testdata/malformed/GAPS", gap.owner)
				case !r.ok && !listed:
					t.Errorf("%s\n%s", r.problem, r.output)
				case !r.ok:
					t.Logf("known gap (%s): %s", gap.owner, r.problem)
				}
			})
		}
	})

	passed, silent := 0, []string{}
	byOwner := map[string][]string{}
	type tally struct{ passed, all int }
	byCategory := map[string]*tally{}
	for _, c := range cases {
		r, ok := results[c.file]
		if !ok {
			continue
		}
		if byCategory[c.category] == nil {
			byCategory[c.category] = &tally{}
		}
		byCategory[c.category].all++
		if r.ok {
			passed++
			byCategory[c.category].passed++
			continue
		}
		owner := gaps[c.file].owner
		if owner == "" {
			owner = "unlisted"
		}
		byOwner[owner] = append(byOwner[owner], c.file+": "+r.problem)
		if r.runExit == 0 && r.ran {
			silent = append(silent, c.file)
		}
	}
	t.Logf("malformed: %d of %d rejected with FILE:line:col and the expected message (%.1f%%); vet ok and run exit 0: %d %v",
		passed, len(results), 100*float64(passed)/float64(max(len(results), 1)), len(silent), silent)
	var cats []string
	for _, k := range slices.Sorted(maps.Keys(byCategory)) {
		cats = append(cats, fmt.Sprintf("%s %d/%d", k, byCategory[k].passed, byCategory[k].all))
	}
	t.Logf("by category: %s", strings.Join(cats, ", "))
	owners := make([]string, 0, len(byOwner))
	for o := range byOwner {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for _, o := range owners {
		t.Logf("gaps of %s (%d):\n  %s", o, len(byOwner[o]), strings.Join(byOwner[o], "\n  "))
	}
}

// runTimeout bounds `labrun run` on a case that vet accepted.
const runTimeout = 20 * time.Second

// malformedCase is one file of testdata/malformed and what its header expects.
type malformedCase struct {
	file, path, target, category string
	lines                        []string // the file's lines, for the columns of want
	wants                        []malformedPos
	msgs                         [][]string // each entry: alternatives, one of which must appear
	problems                     int        // when > 0, how many FILE:line:col: lines vet prints
}

// malformedPos is where a diagnostic may point: a line and a range of columns (1-based, bytes),
// from the character before the wanted text (the opening quote of a string it starts) to the
// one after it.
type malformedPos struct {
	line, col1, col2 int
	text             string
}

// malformedResult is what labrun did with a case.
type malformedResult struct {
	ok       bool
	problem  string // why it fails, one line
	output   string // vet's (and run's) output, for an unlisted failure
	panicked string
	ran      bool // run was tried (vet accepted a local case)
	runExit  int
}

// malformedGap is a line of GAPS.
type malformedGap struct{ owner, note string }

func readMalformedCases(t *testing.T, dir string) []malformedCase {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []malformedCase
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".cue") && !strings.HasSuffix(name, ".md") {
			continue
		}
		c, err := parseMalformedCase(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, c)
	}
	if len(out) < 150 {
		t.Fatalf("%s holds %d cases; the corpus has at least 150", dir, len(out))
	}
	return out
}

func parseMalformedCase(path string) (malformedCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return malformedCase{}, err
	}
	c := malformedCase{file: filepath.Base(path), path: path, target: "local"}
	// A case saved with a byte order mark has it before its header: the header is read
	// without it (the columns of line 1 count it, as CUE's do).
	c.lines = strings.Split(string(data), "\n")
	c.lines[0] = strings.TrimPrefix(c.lines[0], "\uFEFF")
	md := strings.HasSuffix(path, ".md")
	for i, raw := range c.lines {
		line := strings.TrimRight(raw, "\r")
		if md {
			if i == 0 {
				if line != "<!--" {
					return c, errors.New("a .md case starts with an <!-- header block")
				}
				continue
			}
			if line == "-->" {
				break
			}
		} else {
			if !strings.HasPrefix(line, "// ") {
				break
			}
			line = strings.TrimPrefix(line, "// ")
		}
		key, val, found := strings.Cut(line, ": ")
		if !found {
			continue // the description
		}
		switch key {
		case "category":
			c.category = val
		case "target":
			c.target = val
		case "want":
			p, err := parseMalformedWant(val, c.lines)
			if err != nil {
				return c, err
			}
			c.wants = append(c.wants, p)
		case "msg":
			c.msgs = append(c.msgs, strings.Split(val, "|"))
		case "problems":
			if c.problems, err = strconv.Atoi(val); err != nil || c.problems < 1 {
				return c, fmt.Errorf("problems: %q, want a count of at least 1", val)
			}
		}
	}
	if len(c.wants) == 0 || len(c.msgs) == 0 {
		return c, errors.New("the header needs a want and a msg line")
	}
	// Messages quote the source they point at: a part that the wanted text already holds
	// is found in any message there. At least one msg line must name only what the message
	// adds (what was expected, the suggestion), so that a wrong message cannot pass.
	for _, alts := range c.msgs {
		if !slices.ContainsFunc(alts, func(a string) bool {
			return slices.ContainsFunc(c.wants, func(w malformedPos) bool { return strings.Contains(w.text, a) })
		}) {
			return c, nil
		}
	}
	return c, errors.New("every msg line has a part that the wanted text holds already; add one that names what the message adds")
}

// parseMalformedWant parses "LINE:COL TEXT": TEXT is at that line and (byte) column of the
// file, or is a note in parentheses, e.g. "1:1 (the file)".
func parseMalformedWant(val string, lines []string) (malformedPos, error) {
	at, text, _ := strings.Cut(val, " ")
	l, col, ok := splitLineCol(at + ":")
	if !ok || text == "" || l < 1 || l > len(lines) || col < 1 {
		return malformedPos{}, fmt.Errorf("want %q: expected LINE:COL TEXT within the file", val)
	}
	p := malformedPos{line: l, col1: col - 1, col2: col, text: text}
	if strings.HasPrefix(text, "(") {
		return p, nil
	}
	if !strings.HasPrefix(lines[l-1][min(col-1, len(lines[l-1])):], text) {
		return p, fmt.Errorf("want %q: line %d does not hold the text at column %d", val, l, col)
	}
	p.col2 = col + len(text)
	return p, nil
}

func readMalformedGaps(t *testing.T, path string, cases []malformedCase) map[string]malformedGap {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{}
	for _, c := range cases {
		known[c.file] = true
	}
	gaps := map[string]malformedGap{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			t.Fatalf("%s:%d: expected FILE OWNER note", path, n)
		}
		if !known[fields[0]] {
			t.Fatalf("%s:%d: no case %s in %s", path, n, fields[0], filepath.Dir(path))
		}
		if _, dup := gaps[fields[0]]; dup {
			t.Fatalf("%s:%d: %s is listed twice", path, n, fields[0])
		}
		gaps[fields[0]] = malformedGap{owner: fields[1], note: strings.Join(fields[2:], " ")}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return gaps
}

// judge runs vet --strict on the case, alone in a directory of its own (a .cue file is
// judged with its CUE package: the other cases must not be part of it), then run when vet
// accepted a local case.
func (c malformedCase) judge(t *testing.T, bin string) malformedResult {
	work := t.TempDir()
	data, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, c.file), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var r malformedResult
	code, out := runLabrun(t, bin, work, time.Minute, "vet", "--strict", c.file)
	r.output = "vet --strict exit " + strconv.Itoa(code) + ":\n" + out
	if p := panicIn(out); p != "" {
		r.panicked = "vet: " + p
		return r
	}
	switch {
	case code == 0:
		r.problem = "vet accepts it (exit 0)"
		if c.target == "local" {
			r.ran = true
			r.runExit, out = runLabrun(t, bin, work, runTimeout, "run", "--report-dir", filepath.Join(work, "reports"), c.file)
			r.output += "\nrun exit " + strconv.Itoa(r.runExit) + ":\n" + out
			if p := panicIn(out); p != "" {
				r.panicked = "run: " + p
				return r
			}
			switch r.runExit {
			case 0:
				r.problem += "; run exits 0: nobody reports the mistake"
			case -1:
				r.problem += fmt.Sprintf("; run is still running after %s", runTimeout)
			default:
				r.problem += fmt.Sprintf("; run exits %d", r.runExit)
			}
		}
		return r
	case code != 2:
		r.problem = fmt.Sprintf("vet exits %d, want 2", code)
		return r
	}
	r.problem = c.match(out)
	r.ok = r.problem == ""
	return r
}

// match checks that one line of vet's output starts with FILE:line:col: at a wanted position
// and holds every expected part of the message; it returns what is wrong, or "".
func (c malformedCase) match(out string) string {
	var atPos []string
	var positions []string
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, c.file+":")
		if !ok {
			continue
		}
		l, col, ok := splitLineCol(rest)
		if !ok {
			continue
		}
		positions = append(positions, fmt.Sprintf("%d:%d", l, col))
		for _, w := range c.wants {
			if l == w.line && col >= w.col1 && col <= w.col2 {
				// The message only: the file's name must not supply a word of it.
				_, msg, _ := strings.Cut(strings.SplitN(rest, ":", 3)[2], " ")
				atPos = append(atPos, msg)
			}
		}
	}
	if c.problems > 0 && len(positions) != c.problems {
		return fmt.Sprintf("vet says %d problems at %s, want %d", len(positions), strings.Join(positions, ", "), c.problems)
	}
	if len(atPos) == 0 {
		var want []string
		for _, w := range c.wants {
			want = append(want, fmt.Sprintf("%d:%d-%d %s", w.line, w.col1, w.col2, w.text))
		}
		if len(positions) == 0 {
			return "vet exits 2 but no line starts with " + c.file + ":line:col:"
		}
		return fmt.Sprintf("no diagnostic at %s; vet points at %s", strings.Join(want, " or "), strings.Join(positions, ", "))
	}
	var missing []string
	for _, line := range atPos {
		missing = missing[:0]
		for _, alts := range c.msgs {
			found := false
			for _, a := range alts {
				if strings.Contains(line, a) {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, strings.Join(alts, "|"))
			}
		}
		if len(missing) == 0 {
			return ""
		}
	}
	return fmt.Sprintf("the message at the position lacks %q: %s", strings.Join(missing, `", "`), atPos[0])
}

// splitLineCol parses "LINE:COL:" at the start of s.
func splitLineCol(s string) (line, col int, ok bool) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) < 3 {
		return 0, 0, false
	}
	l, err1 := strconv.Atoi(parts[0])
	c, err2 := strconv.Atoi(parts[1])
	return l, c, err1 == nil && err2 == nil
}

// panicIn returns the panic in a Go program's output, or "".
func panicIn(out string) string {
	for _, marker := range []string{"panic:", "fatal error:", "[recovered]"} {
		if i := strings.Index(out, marker); i >= 0 {
			return out[i:min(len(out), i+2000)]
		}
	}
	if strings.Contains(out, "goroutine ") && strings.Contains(out, "[running]") {
		return out
	}
	return ""
}

// runLabrun runs bin with args in dir, bounded by limit, and returns its exit code (-1 when
// it was stopped at the limit) and its stdout and stderr.
func runLabrun(t *testing.T, bin, dir string, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, buf.String()
	}
	code := exitCodeOf(err)
	if code < 0 {
		t.Fatalf("%s: %v", bin, err)
	}
	return code, buf.String()
}
