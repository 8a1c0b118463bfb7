package lsp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/lsp"
	"labrun.dev/labrun/lsp/lsptest"
)

// check is a stand-in for the CLI's check (which is vet's: cmd/labrun's TestLSP* drive
// that one): dsl's load of the file, its problems and its scenarios.
func check(path string, overlay map[string][]byte) *lsp.Report {
	res, err := dsl.Load([]string{path}, dsl.Options{Overlay: overlay, Partial: true})
	rep := &lsp.Report{}
	var errs dsl.Errors
	if errors.As(err, &errs) {
		rep.Problems = errs
	} else if err != nil {
		rep.Failed = err
	}
	if res != nil {
		rep.Warnings, rep.Skipped = res.Warnings, res.Skipped
		rep.Scenarios = append(append(rep.Scenarios, res.Scenarios...), res.Partial...)
	}
	return rep
}

// session opens files (name → text) in a temporary folder, the first one as a document.
func session(t *testing.T, files map[string]string, open ...string) (*lsptest.Client, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := lsp.New(lsp.Options{Check: check, ReadFile: os.ReadFile, Delay: 10 * time.Millisecond})
	c := lsptest.Pipe(t, srv.Serve)
	c.Initialize("file://" + dir)
	for _, name := range open {
		c.Open("file://"+filepath.Join(dir, name), files[name])
	}
	return c, dir
}

const lab = `package lab

import "labrun.dev/schema"

lab: schema.#Scenario & {
	vars: greeting: "héllo"
	local: backends: a: address: "127.0.0.2:18480"
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "http://127.0.0.2:18480/echo/${vars.greeting}", requests: 10}},
		{assert: "fortio.requests == 10"},
		{name: "after", snapshot: backend: "a"},
	]
	expect: [
		"delta.rq_total == fortio.requests",
		"before.rq_total > 0 && vars.greeting == 'héllo'",
	]
}
`

// at is the 0-based line and UTF-16 column of the first occurrence of mark in text, plus
// delta bytes (ASCII after the mark).
func at(t *testing.T, text, mark string, delta int) (int, int) {
	t.Helper()
	i := strings.Index(text, mark)
	if i < 0 {
		t.Fatalf("%q not in the text", mark)
	}
	i += delta
	line := strings.Count(text[:i], "\n")
	start := strings.LastIndex(text[:i], "\n") + 1
	col := 0
	for _, r := range text[start:i] {
		col++
		if r > 0xFFFF {
			col++
		}
	}
	return line, col
}

func labels(list protocol.CompletionList) []string {
	var out []string
	for _, it := range list.Items {
		out = append(out, it.Label)
	}
	return out
}

func wantLabels(t *testing.T, where string, got []string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: no %q in %v", where, w, got)
		}
	}
	for _, w := range not {
		if slices.Contains(got, w) {
			t.Errorf("%s: %q offered, but it cannot be read there", where, w)
		}
	}
}

// waitClean waits for the document's diagnostics to be published (a check done).
func waitChecked(t *testing.T, c *lsptest.Client, uri string, after int) lsptest.Published {
	t.Helper()
	p, ok := c.Diagnostics(uri, after, 20*time.Second, nil)
	if !ok {
		t.Fatal("no diagnostics published")
	}
	return p
}

// TestCompletionOnTheTimeline: what an expression can read depends on where it is evaluated:
// the expectations read every step; an assert between fortio and after reads before and
// fortio but not after (nor delta, whose last snapshot is after); a ${...} of fortio's own
// url reads before, not fortio itself.
func TestCompletionOnTheTimeline(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": lab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	if p := waitChecked(t, c, uri, 0); len(p.Diagnostics) != 0 {
		t.Fatalf("the scenario has problems: %+v", p.Diagnostics)
	}
	l, col := at(t, lab, `"delta.rq_total ==`, 1)
	expect := labels(c.Completion(uri, l, col))
	wantLabels(t, "expect", expect, []string{"before", "fortio", "after", "delta", "vars", "started", "outcome", "backends", "approx", "within", "len"}, nil)

	// Where the plain delta cannot be read (its last snapshot, after, has not run), delta is
	// offered as the function delta("a", "b") only.
	l, col = at(t, lab, `{assert: "fortio`, len(`{assert: "`))
	assert := c.Completion(uri, l, col)
	wantLabels(t, "assert", labels(assert), []string{"before", "fortio"}, []string{"after"})
	for _, it := range assert.Items {
		if it.Label == "delta" && (it.Kind == nil || *it.Kind != protocol.CompletionItemKindFunction) {
			t.Errorf("assert: delta offered as a value: %s", mustJSON(it))
		}
	}

	l, col = at(t, lab, `${vars.greeting}`, 2)
	wantLabels(t, "${} of fortio's url", labels(c.Completion(uri, l, col)), []string{"before", "vars"}, []string{"fortio", "after"})
	l, col = at(t, lab, `${vars.greeting}`, len("${vars."))
	wantLabels(t, "${vars.", labels(c.Completion(uri, l, col)), []string{"greeting"}, nil)

	// Members: a load's typed fields; a delta's counters (the catalogue of a local backend).
	l, col = at(t, lab, `fortio.requests == 10`, len("fortio."))
	fields := c.Completion(uri, l, col)
	wantLabels(t, "fortio.", labels(fields), []string{"requests", "codes", "p99", "qps"}, nil)
	l, col = at(t, lab, `delta.rq_total`, len("delta.rq_"))
	stats := c.Completion(uri, l, col)
	wantLabels(t, "delta.rq_", labels(stats), []string{"rq_total", "cx_total"}, []string{"cx_active"})
	// The edit replaces what is written of the stat's name, after "delta.".
	for _, it := range stats.Items {
		if it.Label != "rq_total" {
			continue
		}
		b, _ := json.Marshal(it.TextEdit)
		var e protocol.TextEdit
		_ = json.Unmarshal(b, &e)
		if e.Range.Start.Line != uint32(l) || int(e.Range.Start.Character) != col-3 || int(e.Range.End.Character) != col || e.NewText != "rq_total" {
			t.Errorf("rq_total's edit: %s", b)
		}
		if it.Detail == nil || *it.Detail != "counter (count)" {
			t.Errorf("rq_total's detail: %v", it.Detail)
		}
	}
}

// TestCompletionOutsideExpressions: a step's struct offers the step kinds and the common
// fields, a kind's struct its parameters with the schema's docs.
func TestCompletionOutsideExpressions(t *testing.T) {
	text := strings.Replace(lab, `{name: "after", snapshot: backend: "a"},`, `{name: "after", snapshot: backend: "a"},
		{name: "more", },
		{name: "load2", load: {}},`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	l, col := at(t, text, `{name: "more", }`, len(`{name: "more", `))
	step := c.Completion(uri, l, col)
	wantLabels(t, "a step", labels(step), []string{"load", "snapshot", "assert", "wait", "timeout", "every"}, []string{"name"})
	l, col = at(t, text, `load: {}`, len(`load: {`))
	load := c.Completion(uri, l, col)
	wantLabels(t, "load: {", labels(load), []string{"url", "requests", "connections", "keepalive"}, []string{"snapshot"})
	for _, it := range load.Items {
		if it.Label == "connections" && !strings.Contains(string(mustJSON(it.Documentation)), "fortio's -c") {
			t.Errorf("connections' doc: %s", mustJSON(it.Documentation))
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestHoverAndDefinition: a name in an expression shows its type, its step and whether it
// can be read there; definition goes to the step's name.
func TestHoverAndDefinition(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": lab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	l, col := at(t, lab, `delta.rq_total ==`, len("delta.rq"))
	h := c.Hover(uri, l, col)
	if h == nil {
		t.Fatal("no hover on delta.rq_total")
	}
	md := string(mustJSON(h.Contents))
	for _, w := range []string{"delta.rq_total", "number (count)", "counter", "`after` minus those of `before`"} {
		if !strings.Contains(md, w) {
			t.Errorf("hover on rq_total lacks %q: %s", w, md)
		}
	}
	if h.Range == nil || h.Range.Start.Character != uint32(col-2) || h.Range.End.Character != uint32(col+6) {
		t.Errorf("hover range %+v, want the word rq_total", h.Range)
	}
	l, col = at(t, lab, `{assert: "fortio.requests`, len(`{assert: "fo`))
	md = string(mustJSON(c.Hover(uri, l, col).Contents))
	for _, w := range []string{"step `fortio` (load) at steps.1", "Readable here (step steps.2)"} {
		if !strings.Contains(md, w) {
			t.Errorf("hover on fortio in the assert lacks %q: %s", w, md)
		}
	}
	l, col = at(t, lab, `== fortio.requests",`, len("== fort"))
	locs := c.Definition(uri, l, col)
	nl, ncol := at(t, lab, `name: "fortio"`, len(`name: "`))
	if len(locs) != 1 || locs[0].URI != uri || locs[0].Range.Start.Line != uint32(nl) || locs[0].Range.Start.Character != uint32(ncol) || locs[0].Range.End.Character != uint32(ncol+6) {
		t.Errorf("definition of fortio: %+v, want %d:%d", locs, nl, ncol)
	}
}

// TestDiagnosticsFollowEdits: a change that breaks an expression is published at the
// right column (after non-ASCII text), with a quick fix that applies the suggestion; the
// fix clears it.
func TestDiagnosticsFollowEdits(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": lab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	// before.rq_total > 0 && vars.greeting == 'héllo' → … 'héllo' && delta.cx_totl > 0
	l, col := at(t, lab, `'héllo'"`, len(`'héllo'`))
	n := c.Count()
	v := c.Change(uri, &protocol.Range{Start: protocol.Position{Line: uint32(l), Character: uint32(col)}, End: protocol.Position{Line: uint32(l), Character: uint32(col)}}, " && delta.cx_totl > 0")
	p, ok := c.Diagnostics(uri, n, 20*time.Second, func(p lsptest.Published) bool { return p.Version != nil && int32(*p.Version) == v })
	if !ok || len(p.Diagnostics) != 1 {
		t.Fatalf("after the change: %+v", p.Diagnostics)
	}
	d := p.Diagnostics[0]
	wantCol := uint32(col + len(" && delta."))
	if d.Range.Start.Line != uint32(l) || d.Range.Start.Character != wantCol || d.Range.End.Character != wantCol+7 {
		t.Errorf("cx_totl at %+v, want %d:%d-%d", d.Range, l, wantCol, wantCol+7)
	}
	acts := c.CodeActions(uri, p.Diagnostics)
	if len(acts) != 1 || acts[0].Title != "Change cx_totl to cx_total" {
		t.Fatalf("code actions: %+v", acts)
	}
	e := acts[0].Edit.Changes[uri][0]
	n = c.Count()
	v = c.Change(uri, &e.Range, e.NewText)
	p, ok = c.Diagnostics(uri, n, 20*time.Second, func(p lsptest.Published) bool { return p.Version != nil && int32(*p.Version) == v })
	if !ok || len(p.Diagnostics) != 0 {
		t.Fatalf("after the fix: %+v", p.Diagnostics)
	}
}

// TestUnsavedBuffers: the check reads the editor's text, not the file on disk; a Markdown
// document's problems are at the document's lines, whatever the letter case of its extension
// (GUIDE.MD is Markdown to labrun vet and doc; the editor checked no such file).
func TestUnsavedBuffers(t *testing.T) {
	for _, name := range []string{"lab.md", "GUIDE.MD"} {
		t.Run(name, func(t *testing.T) {
			doc := "# A lab\n\nSome text.\n\n```cue labrun\n" + strings.TrimPrefix(strings.Replace(lab, "requests: 10}", "requestz: 10}", 1), "package lab\n") + "```\n"
			c, dir := session(t, map[string]string{"lab.cue": "package lab\n", name: "# empty\n"})
			uri := "file://" + filepath.Join(dir, name)
			c.Open(uri, doc)
			p := waitChecked(t, c, uri, 0)
			l, col := at(t, doc, "requestz", 0)
			if len(p.Diagnostics) != 1 || p.Diagnostics[0].Range.Start.Line != uint32(l) || p.Diagnostics[0].Range.Start.Character != uint32(col) {
				t.Fatalf("diagnostics of the document: %+v, want one at %d:%d", p.Diagnostics, l, col)
			}
			l, col = at(t, doc, `"delta.rq_total ==`, 1)
			wantLabels(t, "expect in Markdown", labels(c.Completion(uri, l, col)), []string{"before", "fortio", "after", "delta"}, nil)
		})
	}
}

// TestValuesHook: a plain string of a kind's field is completed by Options.Values (the hook
// for config paths typed by Envoy's types), replacing what is written.
func TestValuesHook(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.cue")
	var asked []string
	srv := lsp.New(lsp.Options{Check: check, Values: func(kind, field, written string, _ map[string]bool) []string {
		asked = append(asked, kind+"."+field+"="+written)
		return []string{"127.0.0.2:18480", "127.0.0.3:18480"}
	}})
	c := lsptest.Pipe(t, srv.Serve)
	c.Initialize("file://" + dir)
	uri := "file://" + path
	c.Open(uri, lab)
	waitChecked(t, c, uri, 0)
	l, col := at(t, lab, `address: "127.0.0.2`, len(`address: "127`))
	if got := labels(c.Completion(uri, l, col)); len(got) != 0 {
		t.Errorf("a string outside steps was completed: %v", got)
	}
	l, col = at(t, lab, `url: "http://127`, len(`url: "http`))
	got := labels(c.Completion(uri, l, col))
	if !slices.Equal(got, []string{"127.0.0.2:18480", "127.0.0.3:18480"}) || !slices.Equal(asked, []string{"load.url=http"}) {
		t.Errorf("values %v, asked %v", got, asked)
	}
}

// deltaLab reads the plain delta in two asserts: the first runs when only before has been
// taken (the run errs there: delta needs two snapshots), the second when before and mid
// have (delta is then mid minus before, not after minus before: while the run is under way
// delta is the first and the last snapshot taken so far).
const deltaLab = `package lab

import "labrun.dev/schema"

lab: schema.#Scenario & {
	local: backends: a: address: "127.0.0.2:18480"
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "http://127.0.0.2:18480/echo", requests: 10}},
		{assert: "fortio.code200 == 10 && delta.cx_total == 10"},
		{name: "mid", snapshot: backend: "a"},
		{assert: "delta.rq_total == 10"},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["delta.rq_total == fortio.requests"]
}
`

// TestHoverPlainDelta: a hover on delta says what the plain delta is where the expression
// reads it: the word delta of delta.<stat> is the value, not the function delta("a", "b");
// an assert's delta is the snapshots taken by then, and one that runs before two snapshots
// can have been taken cannot read it.
func TestHoverPlainDelta(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": deltaLab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	hover := func(mark string, delta int) string {
		t.Helper()
		l, col := at(t, deltaLab, mark, delta)
		h := c.Hover(uri, l, col)
		if h == nil {
			t.Fatalf("no hover at %q+%d", mark, delta)
		}
		return string(mustJSON(h.Contents))
	}
	for _, tc := range []struct {
		mark      string
		delta     int
		want, not []string
	}{
		// The word delta in the expectations: the plain delta's type and pair.
		{`"delta.rq_total == fortio`, 3, []string{"`delta`: stats", "`after` minus those of `before`"}, []string{`delta(\"a\", \"b\"): the counters`}},
		// The first assert: only before can have been taken.
		{`delta.cx_total == 10"`, len("delta.cx"), []string{"Not readable here", "two snapshots"}, []string{"`after` minus those of `before`"}},
		{`delta.cx_total == 10"`, 2, []string{"Not readable here"}, []string{`delta(\"a\", \"b\"): the counters`}},
		// The second assert: mid minus before.
		{`{assert: "delta.rq_total`, len(`{assert: "delta.rq`), []string{"`mid` minus those of `before`", "Readable here"}, []string{"`after` minus those of `before`"}},
	} {
		md := hover(tc.mark, tc.delta)
		for _, w := range tc.want {
			if !strings.Contains(md, w) {
				t.Errorf("hover at %q+%d lacks %q: %s", tc.mark, tc.delta, w, md)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(md, w) {
				t.Errorf("hover at %q+%d says %q: %s", tc.mark, tc.delta, w, md)
			}
		}
	}
}

// TestHoverDeltaRefused: with one snapshot there is no plain delta (vet refuses it); a hover
// on it says why, not "before minus before".
func TestHoverDeltaRefused(t *testing.T) {
	text := strings.Replace(strings.Replace(deltaLab, "\t\t{name: \"mid\", snapshot: backend: \"a\"},\n", "", 1), "\t\t{name: \"after\", snapshot: backend: \"a\"},\n", "", 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	for _, d := range []int{3, len(`"delta.rq`)} {
		l, col := at(t, text, `"delta.rq_total == fortio`, d)
		h := c.Hover(uri, l, col)
		if h == nil {
			t.Fatalf("no hover at +%d", d)
		}
		md := string(mustJSON(h.Contents))
		if !strings.Contains(md, "delta needs two snapshots") || strings.Contains(md, "minus those of `before`") {
			t.Errorf("hover at +%d: %s", d, md)
		}
	}
}

// TestCompletionPlainDelta: an assert offers the plain delta (and its counters after
// "delta.") where two snapshots can have been taken by then, and not before: vet refuses
// delta there.
func TestCompletionPlainDelta(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": deltaLab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	valueDelta := func(list protocol.CompletionList) bool {
		for _, it := range list.Items {
			if it.Label == "delta" && it.Kind != nil && *it.Kind == protocol.CompletionItemKindVariable {
				return true
			}
		}
		return false
	}
	l, col := at(t, deltaLab, `{assert: "fortio.code200`, len(`{assert: "`))
	if valueDelta(c.Completion(uri, l, col)) {
		t.Errorf("the first assert (only before taken) offers the plain delta")
	}
	for _, written := range []string{"delta.", "delta.cx_"} {
		l, col = at(t, deltaLab, `delta.cx_total == 10"`, len(written))
		if got := labels(c.Completion(uri, l, col)); len(got) != 0 {
			t.Errorf("the first assert offers delta's stats after %q: %v", written, got)
		}
	}
	l, col = at(t, deltaLab, `{assert: "delta.rq_total`, len(`{assert: "`))
	if !valueDelta(c.Completion(uri, l, col)) {
		t.Errorf("the second assert (before and mid taken) does not offer the plain delta")
	}
	l, col = at(t, deltaLab, `{assert: "delta.rq_total`, len(`{assert: "delta.`))
	wantLabels(t, "second assert's delta.", labels(c.Completion(uri, l, col)), []string{"rq_total", "cx_total"}, []string{"rq_active"})
}

// TestQuickFixTargetsTheMisspelling: a problem placed at a name other than the misspelt one
// (delta("befor", "after") is reported at delta) gets the quick fix of the misspelt name,
// befor → before, not delta → before.
func TestQuickFixTargetsTheMisspelling(t *testing.T) {
	text := strings.Replace(lab, `"delta.rq_total == fortio.requests",`, `"delta(\"befor\", \"after\").rq_total == fortio.requests",`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	p := waitChecked(t, c, uri, 0)
	if len(p.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %+v", p.Diagnostics)
	}
	acts := c.CodeActions(uri, p.Diagnostics)
	if len(acts) != 1 || acts[0].Title != "Change befor to before" {
		t.Fatalf("code actions: %s", mustJSON(acts))
	}
	e := acts[0].Edit.Changes[uri][0]
	l, col := at(t, text, `befor\"`, 0)
	if e.Range.Start.Line != uint32(l) || e.Range.Start.Character != uint32(col) || e.Range.End.Character != uint32(col+5) || e.NewText != "before" {
		t.Errorf("edit %s, want %d:%d-%d before", mustJSON(e), l, col, col+5)
	}
}

// TestCueModIsNotALab: the files of a cue.mod directory (module.cue, the vendored schema
// labrun init writes) are CUE's, not scenarios: opened in the editor (go to definition of
// schema.#Scenario leads there) they get no problem, where labrun vet FILE says "cannot load
// packages inside the cue.mod directory" or "no scenario declared in this file".
func TestCueModIsNotALab(t *testing.T) {
	dir := t.TempDir()
	srv := lsp.New(lsp.Options{Check: check, ReadFile: os.ReadFile, Delay: 10 * time.Millisecond})
	c := lsptest.Pipe(t, srv.Serve)
	c.Initialize("file://" + dir)
	for name, text := range map[string]string{
		"cue.mod/module.cue":                     "module: \"x.lab.local@v0\"\nlanguage: version: \"v0.9.0\"\n",
		"cue.mod/pkg/labrun.dev/schema/load.cue": "package schema\n\n#Load: {url: string}\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		uri := "file://" + path
		n := c.Count()
		c.Open(uri, text)
		p, ok := c.Diagnostics(uri, n, 20*time.Second, nil)
		if !ok {
			t.Fatalf("%s: nothing published", name)
		}
		if len(p.Diagnostics) != 0 {
			t.Errorf("%s: %s", name, mustJSON(p.Diagnostics))
		}
	}
}

// TestHoverInsideADottedStat: a stat's name holds dots (http.downstream_rq_total,
// circuit_breakers.default.rq_pending_open); a hover on its first part is a hover on the
// stat, not "http: not a stat the backend is known to have".
func TestHoverInsideADottedStat(t *testing.T) {
	text := strings.Replace(lab, `"before.rq_total > 0 &&`, `"before.http.downstream_rq_total > 0 && before.rq_total > 0 &&`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	for _, d := range []int{len("before.ht"), len("before.http.down")} {
		l, col := at(t, text, `before.http.downstream_rq_total`, d)
		h := c.Hover(uri, l, col)
		if h == nil {
			t.Fatalf("no hover at +%d", d)
		}
		md := string(mustJSON(h.Contents))
		if strings.Contains(md, "not a stat") || !strings.Contains(md, "stat `http.downstream_rq_total` of local backend a: counter") {
			t.Errorf("hover at +%d: %s", d, md)
		}
	}
}

// TestCompletionOneKindPerStep: a step that has its kind is offered the common fields, not
// a second kind (vet refuses "step has 2 kinds").
func TestCompletionOneKindPerStep(t *testing.T) {
	text := strings.Replace(lab, `{name: "after", snapshot: backend: "a"},`, `{name: "after", snapshot: backend: "a", },`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	l, col := at(t, text, `backend: "a", }`, len(`backend: "a", `))
	wantLabels(t, "a snapshot step", labels(c.Completion(uri, l, col)), []string{"timeout", "every", "doc"}, []string{"load", "sleep", "assert", "snapshot"})
}

// TestNoCompletionWhereNothingInterpolates: ${...} is evaluated in a kind's parameters
// only; in a step's doc, every or while it is plain text (vet refuses it in every and
// while), so completion offers nothing there.
func TestNoCompletionWhereNothingInterpolates(t *testing.T) {
	text := strings.Replace(lab, `{name: "after", snapshot: backend: "a"},`, `{name: "after", doc: "after ${before.rq_total}", snapshot: backend: "a"},`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	for _, d := range []int{len(`after ${`), len(`after ${before.`)} {
		l, col := at(t, text, `after ${before.rq_total}`, d)
		if got := labels(c.Completion(uri, l, col)); len(got) != 0 {
			t.Errorf("completion in a doc's ${ at +%d: %v", d, got)
		}
		if h := c.Hover(uri, l, col); h != nil {
			t.Errorf("hover in a doc's ${ at +%d: %s", d, mustJSON(h.Contents))
		}
	}
}

// TestHoverVarsHaveNoMoment: vars (and the target's backends) are there from the start: a
// hover on vars.greeting or backends.a.address says no "Exists after the step ends", which
// only a step's result fields have.
func TestHoverVarsHaveNoMoment(t *testing.T) {
	text := strings.Replace(lab, `"before.rq_total > 0 &&`, `"backends.a.address != '' && before.rq_total > 0 &&`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	for _, mark := range []string{"vars.greeting == 'héllo'", "backends.a.address != ''"} {
		l, col := at(t, text, mark, strings.LastIndex(mark, ".")+2)
		h := c.Hover(uri, l, col)
		if h == nil {
			t.Fatalf("no hover on %s", mark)
		}
		if md := string(mustJSON(h.Contents)); strings.Contains(md, "Exists") || strings.Contains(md, "step ends") {
			t.Errorf("hover on %s: %s", mark, md)
		}
	}
	l, col := at(t, text, "vars.greeting == 'héllo'", len("vars."))
	for _, it := range c.Completion(uri, l, col).Items {
		if doc := string(mustJSON(it.Documentation)); strings.Contains(doc, "Exists") {
			t.Errorf("completion of vars.%s: %s", it.Label, doc)
		}
	}
	// A result's field keeps its moment.
	l, col = at(t, text, "fortio.requests ==", len("fortio.re"))
	if md := string(mustJSON(c.Hover(uri, l, col).Contents)); !strings.Contains(md, "Exists after the step ends") {
		t.Errorf("hover on fortio.requests: %s", md)
	}
}

// TestCatchSteps: a catch step's expression (run where the steps fail) is completed and
// explained as the other phases' are.
func TestCatchSteps(t *testing.T) {
	text := strings.Replace(lab, "\texpect: [", "\tcatch: [\n\t\t{name: \"dump\", snapshot: backend: \"a\"},\n\t\t{assert: \"dump.rq_total >= 0 || fortio.requests == 10\"},\n\t]\n\texpect: [", 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	l, col := at(t, text, `{assert: "dump.rq_total`, len(`{assert: "`))
	wantLabels(t, "catch assert", labels(c.Completion(uri, l, col)), []string{"dump", "fortio", "before"}, nil)
	l, col = at(t, text, `{assert: "dump.rq_total`, len(`{assert: "dump.rq`))
	h := c.Hover(uri, l, col)
	if h == nil || !strings.Contains(string(mustJSON(h.Contents)), "Readable here (step catch.1)") {
		t.Errorf("hover in the catch assert: %+v", h)
	}
}

// TestCatchStepsOutsideCatch: a catch step runs only when the run failed. vet refuses the
// expectations' reads of one (outcome.why, error.why too) and a cleanup's unguarded read, so the
// editor offers it there only where vet accepts it: in a cleanup, after a guard that it ran
// (has(ended, 'why'), outcome.why != 'skipped') or as outcome.why; never to the expectations.
// Before, both offered why everywhere, and hover said it was readable.
func TestCatchStepsOutsideCatch(t *testing.T) {
	text := strings.Replace(lab, "\texpect: [", `	catch: [{name: "why", snapshot: backend: "a"}]
	cleanup: [{assert: "outcome.why == 'skipped' || why.rq_total >= 0"},
		{assert: "fortio.requests >= 10"},
		{assert: "has(ended, 'why') ? why.rq_total >= 0 : true"}]
	expect: [`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	if p := waitChecked(t, c, uri, 0); len(p.Diagnostics) != 0 {
		t.Fatalf("the scenario has problems: %+v", p.Diagnostics)
	}
	l, col := at(t, text, `"delta.rq_total ==`, 1)
	wantLabels(t, "expect", labels(c.Completion(uri, l, col)), []string{"before", "fortio"}, []string{"why"})
	l, col = at(t, text, `{assert: "fortio.requests >= 10"}`, len(`{assert: "`))
	wantLabels(t, "cleanup, unguarded", labels(c.Completion(uri, l, col)), []string{"before", "fortio", "outcome"}, []string{"why"})
	l, col = at(t, text, `{assert: "outcome.why`, len(`{assert: "outcome.`))
	wantLabels(t, "cleanup, outcome.", labels(c.Completion(uri, l, col)), []string{"why", "fortio"}, nil)
	l, col = at(t, text, `{assert: "has(ended, 'why') ? why.rq_total`, len(`{assert: "has(ended, 'why') ? `))
	wantLabels(t, "cleanup, after has(ended, 'why')", labels(c.Completion(uri, l, col)), []string{"why", "fortio"}, nil)
	l, col = at(t, text, `'skipped' || why.rq_total`, len(`'skipped' || why.`))
	wantLabels(t, "cleanup, why. after outcome.why == 'skipped' ||", labels(c.Completion(uri, l, col)), []string{"rq_total"}, nil)
	l, col = at(t, text, `{assert: "has(ended, 'why') ? why.rq_total`, len(`{assert: "has(ended, 'why') ? w`))
	if h := c.Hover(uri, l, col); h == nil || !strings.Contains(string(mustJSON(h.Contents)), "Readable here") {
		t.Errorf("hover on a guarded why in a cleanup: %s", mustJSON(h))
	}

	// outcome.why == 'skipped' && … is where it did not run: vet refuses why there.
	skippedAnd := strings.Replace(text, `'skipped' || why.rq_total`, `'skipped' && why.rq_total`, 1)
	n := c.Count()
	c.Change(uri, nil, skippedAnd)
	waitChecked(t, c, uri, n)
	l, col = at(t, skippedAnd, `'skipped' && why.rq_total`, len(`'skipped' && `))
	wantLabels(t, "cleanup, after outcome.why == 'skipped' &&", labels(c.Completion(uri, l, col)), []string{"fortio"}, []string{"why"})

	// Written where vet refuses it: the hover says why.
	bad := strings.Replace(text, `"fortio.requests >= 10"}`, `"why.rq_total >= 0"}`, 1)
	bad = strings.Replace(bad, `"delta.rq_total == fortio.requests",`, `"delta.rq_total == fortio.requests", "why.rq_total >= 0",`, 1)
	n = c.Count()
	c.Change(uri, nil, bad)
	waitChecked(t, c, uri, n)
	l, col = at(t, bad, `{assert: "why.rq_total`, len(`{assert: "w`))
	if h := c.Hover(uri, l, col); h == nil || !strings.Contains(string(mustJSON(h.Contents)), "Not readable here") {
		t.Errorf("hover on an unguarded why in a cleanup: %s", mustJSON(h))
	}
	l, col = at(t, bad, `"why.rq_total >= 0",`, len(`"w`))
	if h := c.Hover(uri, l, col); h == nil || !strings.Contains(string(mustJSON(h.Contents)), "Not readable by the expectations") {
		t.Errorf("hover on why in an expectation: %s", mustJSON(h))
	}
}

// TestCompletionDeltaPairSource: delta("a", "b") compares two snapshots of one source, and
// deltaAcross two of different sources (vet refuses either otherwise): the second argument
// offers the snapshots that fit the first.
func TestCompletionDeltaPairSource(t *testing.T) {
	text := strings.Replace(strings.Replace(lab,
		`local: backends: a: address: "127.0.0.2:18480"`, `local: backends: {a: address: "127.0.0.2:18480", b: address: "127.0.0.3:18480"}`, 1),
		`{name: "after", snapshot: backend: "a"},`, `{name: "after", snapshot: backend: "a"},
		{name: "bb", snapshot: backend: "b"},
		{name: "bc", snapshot: backend: "b"},`, 1)
	text = strings.Replace(text, `"delta.rq_total == fortio.requests",`, `"delta(\"before\", \"after\").rq_total == fortio.requests",
		"deltaAcross(\"before\", \"bb\").rq_total == 0",`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	l, col := at(t, text, `delta(\"before\", \"after\")`, len(`delta(\"before\", \"`))
	wantLabels(t, "delta's second argument", labels(c.Completion(uri, l, col)), []string{"after"}, []string{"bb", "bc"})
	l, col = at(t, text, `deltaAcross(\"before\", \"bb\")`, len(`deltaAcross(\"before\", \"`))
	wantLabels(t, "deltaAcross's second argument", labels(c.Completion(uri, l, col)), []string{"bb", "bc"}, []string{"after", "before"})
	l, col = at(t, text, `delta(\"before\", \"after\")`, len(`delta(\"`))
	wantLabels(t, "delta's first argument", labels(c.Completion(uri, l, col)), []string{"before", "after", "bb"}, nil)
}

// TestProblemUnderlinesTheDottedStat: a misspelt dotted stat is reported at its first name
// (http); the problem's range covers the whole stat the message names, not http alone, which
// is fine. A problem at a name whose message does not name the dotted whole keeps the name.
func TestProblemUnderlinesTheDottedStat(t *testing.T) {
	text := strings.Replace(lab, `"delta.rq_total == fortio.requests",`, `"delta.http.downstream_rq_totl == fortio.requests",`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	p := waitChecked(t, c, uri, 0)
	if len(p.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %+v", p.Diagnostics)
	}
	l, col := at(t, text, `http.downstream_rq_totl`, 0)
	r := p.Diagnostics[0].Range
	if r.Start.Line != uint32(l) || r.Start.Character != uint32(col) || r.End.Character != uint32(col+len("http.downstream_rq_totl")) {
		t.Errorf("range %s, want %d:%d-%d (http.downstream_rq_totl)", mustJSON(r), l, col, col+len("http.downstream_rq_totl"))
	}
	acts := c.CodeActions(uri, p.Diagnostics)
	if len(acts) != 1 || acts[0].Title != "Change http.downstream_rq_totl to http.downstream_rq_total" {
		t.Errorf("code actions: %s", mustJSON(acts))
	}
}

// TestRequestOnDocumentNotOpen: a request about a document the editor has not opened (a
// client asking before its didOpen arrives, or after its didClose, or about a file it never
// opened) was answered with error -32600 "the document is not open", which editors show the
// user as a failure. It is answered as gopls answers such a request it cannot serve: with an
// empty result (no completion, no hover, no definition, no code action), not an error.
func TestRequestOnDocumentNotOpen(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": lab})
	uri := "file://" + filepath.Join(dir, "lab.cue")
	for _, r := range []struct {
		method string
		params any
	}{
		{protocol.MethodTextDocumentCompletion, protocol.CompletionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: protocol.Position{Line: 14, Character: 4}}}},
		{protocol.MethodTextDocumentHover, protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: protocol.Position{Line: 14, Character: 4}}}},
		{protocol.MethodTextDocumentDefinition, protocol.DefinitionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Position: protocol.Position{Line: 14, Character: 4}}}},
		{protocol.MethodTextDocumentCodeAction, protocol.CodeActionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}, Context: protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{{Message: `did you mean "requests"?`}}}}},
	} {
		var got json.RawMessage
		if err := c.Call(r.method, r.params, &got); err != nil {
			t.Errorf("%s on a document not open: %v; want an empty result", r.method, err)
			continue
		}
		switch s := strings.TrimSpace(string(got)); s {
		case "null", "[]", `{"isIncomplete":false,"items":[]}`, `{"isIncomplete":false,"items":null}`:
		default:
			t.Errorf("%s on a document not open: %s; want an empty result", r.method, s)
		}
	}
}

// TestHoverResultOnce: the hover of a load's name listed each of its 18 fields, then each
// again under pods[i]. with the same doc (a client pod's own result has the same fields):
// 40 lines, half of them repeated. A list's items that have their parent's fields say so
// and list only the fields of their own (none: the load's own result has pod too).
func TestHoverResultOnce(t *testing.T) {
	c, dir := session(t, map[string]string{"lab.cue": lab}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	l, col := at(t, lab, `fortio.requests"`, 1)
	h := c.Hover(uri, l, col)
	if h == nil {
		t.Fatal("no hover on fortio")
	}
	var md protocol.MarkupContent
	if err := json.Unmarshal(mustJSON(h.Contents), &md); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.Value, "the requests counted"); n != 1 {
		t.Errorf("the doc of requests is in the hover %d times, want once:\n%s", n, md.Value)
	}
	for _, want := range []string{"\np99: number (ms)", "pods[i]: the fields above", "\npod: string"} {
		if !strings.Contains(md.Value, want) {
			t.Errorf("the hover lacks %q:\n%s", want, md.Value)
		}
	}
}

// TestCompletionAfterLet: after a name a let binds (let l = fortio; l.) the editor offered
// nothing, and the name itself was not offered where the body reads it: a let's name is typed
// by its value, as vet types it, and offered in its body. Outside the body (after the
// brackets that hold the let close) it is not.
func TestCompletionAfterLet(t *testing.T) {
	doc := strings.Replace(lab, `"before.rq_total > 0 && vars.greeting == 'héllo'",`,
		`"before.rq_total > 0 && vars.greeting == 'héllo'",
		"let l = fortio; let s = after; l.requests == 10 && s.rq_total > 0",
		"(let m = fortio; m.requests > 0) && fortio.requests > 0",`, 1)
	c, dir := session(t, map[string]string{"lab.cue": doc}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	if p := waitChecked(t, c, uri, 0); len(p.Diagnostics) != 0 {
		t.Fatalf("the scenario has problems: %+v", p.Diagnostics)
	}
	l, col := at(t, doc, `l.requests == 10`, len("l."))
	wantLabels(t, "l.", labels(c.Completion(uri, l, col)), []string{"requests", "codes", "p99"}, nil)
	l, col = at(t, doc, `s.rq_total > 0"`, len("s.rq_"))
	wantLabels(t, "s.rq_", labels(c.Completion(uri, l, col)), []string{"rq_total", "cx_active"}, nil)
	l, col = at(t, doc, `s.rq_total > 0"`, 0)
	wantLabels(t, "the body", labels(c.Completion(uri, l, col)), []string{"l", "s", "fortio"}, nil)
	l, col = at(t, doc, `fortio.requests > 0",`, 0)
	wantLabels(t, "after the brackets", labels(c.Completion(uri, l, col)), []string{"fortio"}, []string{"m"})
	// Hover on a member of a let's name: its type, as on fortio.requests.
	l, col = at(t, doc, `l.requests == 10`, len("l.req"))
	if h := c.Hover(uri, l, col); h == nil || !strings.Contains(string(mustJSON(h.Contents)), "`l.requests`: number") {
		t.Errorf("hover on l.requests: %s", mustJSON(h))
	}
}

// TestHoverVarValues: a hover on vars.<name> says the value the var is declared with and, when
// the scenario sweeps it, the values each run reads one of: before, "`vars.rate`: number"
// alone, so a claim such as fortio.qps > vars.rate * 0.9 did not show what it compares with
// in the runs. A secret's values are not shown.
func TestHoverVarValues(t *testing.T) {
	text := strings.Replace(lab, `vars: greeting: "héllo"`, "vars: {greeting: \"héllo\", rate: 10.0, token: \"s3cr3t\"}\n\tsweep: rate: [10.0, 20.5]\n\tsecrets: [\"token\"]", 1)
	text = strings.Replace(text, `"fortio.requests == 10"`, `"fortio.qps < vars.rate * 2 && vars.token != ''"`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	waitChecked(t, c, uri, 0)
	for _, h := range []struct{ mark, want, not string }{
		{"vars.rate *", "`vars.rate`: number\n\ndeclared 10 (line 6); swept: 10, 20.5 (each run reads one)", ""},
		{"vars.greeting ==", "`vars.greeting`: string\n\ndeclared \"héllo\" (line 6)", "swept"},
		{"vars.token !=", "`vars.token`: string\n\na secret: its value is not shown", "s3cr3t"},
	} {
		hoverStartsWith(t, c, uri, text, h.mark, h.want, h.not)
	}
}

// TestHoverVarNamedUnit: a number var whose name gives a time unit (maxDurationMs) is read in
// that unit by vet beside a time, which refuses it beside a time of the other unit; the hover
// said only "number", so the refusal came as a surprise. It says the unit now; a var whose name
// gives none (rate) and a string var (delayMs: "2s") are shown as before.
func TestHoverVarNamedUnit(t *testing.T) {
	text := strings.Replace(lab, `vars: greeting: "héllo"`, "vars: {greeting: \"héllo\", maxDurationMs: 2000, rate: 10, delayMs: \"2s\"}", 1)
	text = strings.Replace(text, `"fortio.requests == 10"`, `"fortio.duration * 1000 < vars.maxDurationMs && fortio.qps < vars.rate && duration(vars.delayMs) > fortio.p99"`, 1)
	c, dir := session(t, map[string]string{"lab.cue": text}, "lab.cue")
	uri := "file://" + filepath.Join(dir, "lab.cue")
	if p := waitChecked(t, c, uri, 0); len(p.Diagnostics) != 0 {
		t.Fatalf("the scenario has problems: %+v", p.Diagnostics)
	}
	hoverStartsWith(t, c, uri, text, "vars.maxDurationMs &&", "`vars.maxDurationMs`: number\n\ndeclared 2000 (line 6); milliseconds by its name (a var's number has no unit of its own", "")
	hoverStartsWith(t, c, uri, text, "vars.rate &&", "`vars.rate`: number\n\ndeclared 10 (line 6)", "by its name")
	hoverStartsWith(t, c, uri, text, "vars.delayMs)", "`vars.delayMs`: string\n\ndeclared \"2s\" (line 6)", "by its name")
}

// hoverStartsWith checks the hover on the name after "vars." in mark starts with want and
// holds no not.
func hoverStartsWith(t *testing.T, c *lsptest.Client, uri, text, mark, want, not string) {
	t.Helper()
	h := struct{ mark, want, not string }{mark, want, not}
	{
		l, col := at(t, text, h.mark, len("vars.")+1)
		hv := c.Hover(uri, l, col)
		if hv == nil {
			t.Fatalf("no hover on %s", h.mark)
		}
		var md protocol.MarkupContent
		if err := json.Unmarshal(mustJSON(hv.Contents), &md); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(md.Value, h.want) || h.not != "" && strings.Contains(md.Value, h.not) {
			t.Errorf("hover on %s:\n%s\nwant it to start with:\n%s", h.mark, md.Value, h.want)
		}
	}
}
