package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDiffTableFits: the table of labrun diff fits the width it is given: a long value
// (an exec's stdout) is cut where the two runs' values first differ, a long path keeps its end.
func TestDiffTableFits(t *testing.T) {
	long := strings.Repeat("0 200 backend-a\n", 20)
	other := long[:160] + "0 200 backend-b\n" + long[176:]
	a, b := shownPair(long, other)
	if !strings.HasPrefix(a, `@170 "end-a 0`) || !strings.HasPrefix(b, `@170 "end-b 0`) {
		t.Errorf("shownPair = %q, %q: want both cut where they differ (char 174), from 4 characters before", a, b)
	}
	if got := show(4.0); got != "4" {
		t.Errorf("show(4) = %q", got)
	}
	if got := show(1234.5678); got != "1235" {
		t.Errorf("show(1234.5678) = %q: at most 4 significant digits", got)
	}
	if got := show(nil); got != "—" {
		t.Errorf("show(nil) = %q", got)
	}
	var out bytes.Buffer
	p := &process{Stdout: &out}
	writeTable(p, [][]string{
		{"VALUE", "UNIT", "A", "B", "CHANGE"},
		{"snapshots.before_flip.counters.circuit_breakers.default.remaining_pending", "count", "1", "0", "-1 (-100%)"},
		{"who.stdout", "", a, b, ""},
	}, 80)
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns, want at most 80: %s", n, l)
		}
	}
	if !strings.Contains(out.String(), "default.remaining_pending  count") {
		t.Errorf("the path lost its end:\n%s", out.String())
	}
}

// A change to +Inf is written once signed ("+Inf%", not "++Inf%").
func TestSignedNonFinite(t *testing.T) {
	for x, want := range map[float64]string{math.Inf(1): "+Inf", math.Inf(-1): "-Inf", 2: "+2", -2: "-2"} {
		if got := signed(x); got != want {
			t.Errorf("signed(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestDiffTableKeepsRowsApart: at 80 columns labrun diff cut its first column from the start,
// and delta.http.downstream_rq_2xx, after.http.downstream_rq_2xx and
// delta("before","after").http.downstream_rq_2xx all read "….http.downstream_rq_2xx": rows
// that differ looked the same. A value's name is cut in its middle, its source and its stat
// both kept in part.
func TestDiffTableKeepsRowsApart(t *testing.T) {
	rows := [][]string{{"VALUE", "UNIT", "A", "B", "CHANGE"}}
	names := []string{`delta("before","after").http.downstream_rq_2xx`, "delta.http.downstream_rq_2xx", "after.http.downstream_rq_2xx", "before.http.downstream_rq_2xx"}
	for _, n := range names {
		rows = append(rows, []string{n, "count", "93 a value long enough", "104 a value long enough", "+11 (+11.83%)"})
	}
	var out bytes.Buffer
	p := testProcess()
	p.Stdout = &out
	writeTable(p, rows, 79)
	seen := map[string]bool{}
	for i, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		first := strings.Fields(l)[0]
		if seen[first] {
			t.Errorf("two rows read %q:\n%s", first, out.String())
		}
		seen[first] = true
		if !strings.HasPrefix(first, names[i][:5]) || !strings.HasSuffix(first, "downstream_rq_2xx") {
			t.Errorf("%s is shown as %q: want its source's start and its stat's end kept\n%s", names[i], first, out.String())
		}
	}
}
