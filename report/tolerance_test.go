package report

import (
	"strings"
	"testing"
)

// TestToleranceProblem: a line of an expected block that starts with ~ but is not a
// tolerance line ("~ EXPR VALUE ±N%") is said to be wrong, at the part at fault; a tolerance
// line and any other line are not. Before, such a line was compared as text with the run's
// lines, and labrun doc failed after the run with a diff that did not say why.
func TestToleranceProblem(t *testing.T) {
	for _, c := range []struct {
		line string
		at   string // the text the offset points at; "" for no problem
		msg  string
	}{
		{line: "~ fortio.avg 3000 ±10%"},
		{line: "  ~ fortio.avg 3000 ± 10%"},
		{line: "~ fortio.avg -1.5e3 ±0%"},
		{line: "expect fortio.code200 == 10: passed"},
		{line: "scenario s: passed"},
		{line: ""},
		{line: "~ fortio.avg 3000 10%", at: "10%", msg: "has no ±: write ±10%"},
		{line: "~ fortio.avg 3000 +-10%", at: "+-10%", msg: "write ±10%"},
		{line: "~ fortio.avg 3000", at: "3000", msg: "no tolerance ±N% at the end"},
		{line: "~ fortio.avg 3000 ±10", at: "±10", msg: "in percent: write ±10%"},
		{line: "~ fortio.avg 3000 ±-10%", at: "±-10%", msg: "0 or more"},
		{line: "~ fortio.avg 3000 ±Inf%", at: "±Inf%", msg: "0 or more"},
		{line: "~ fortio.avg 3000 ±1.2.3%", at: "±1.2.3%", msg: "0 or more"},
		{line: "~ fortio.avg ten ±10%", at: "ten", msg: "not a finite number"},
		{line: "~ fortio.avg NaN ±10%", at: "NaN", msg: "not a finite number"},
		{line: "~ fortio.avg 1e400 ±10%", at: "1e400", msg: "not a finite number"},
		{line: "~ fortio.avg ±10%", at: "±10%", msg: "no value between fortio.avg and ±10%"},
		{line: "~ 3000 ±10%", at: "~ 3000", msg: "no expression before the value 3000"},
		{line: "~fortio.avg 3000 ±10%", at: "~fortio", msg: "a space after its ~"},
		{line: "\t~", at: "~", msg: "a space after its ~"},
	} {
		off, msg, bad := ToleranceProblem(c.line)
		if bad != (c.at != "") {
			t.Errorf("%q: problem %v (%q), want %v", c.line, bad, msg, c.at != "")
			continue
		}
		if !bad {
			continue
		}
		if !strings.HasPrefix(c.line[off:], c.at) {
			t.Errorf("%q: points at %q, want %q", c.line, c.line[off:], c.at)
		}
		if !strings.Contains(msg, c.msg) || !strings.Contains(msg, "e.g.") && !strings.Contains(msg, "expected") {
			t.Errorf("%q: message %q, want one holding %q and what is expected", c.line, msg, c.msg)
		}
	}
}
