package interp

import "testing"

// TestNamesThing: a line of the cleanup names a process by its whole label, wherever the
// line puts it; a longer label, or one that ends the word of another, is not it.
func TestNamesThing(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"removed process srv", true},
		{"removed process srv (attempt 2)", true},
		{"process srv had already ended: it exited with code 1 on its own, before the cleanup (its output: output.txt)", true},
		{"already gone: process srv", true},
		{"failed to remove process srv: boom", true},
		{"abandoned: process srv", true},
		{"removed process srv2", false},
		{"removed process steps.10", false},
		{"removed xprocess srv", false},
		{"pprocess srv", false},
		{"pprocess srv process srv", true},
		{"removed ConfigMap lab/c", false},
	} {
		what := "process srv"
		if c.line == "removed process steps.10" {
			what = "process steps.1"
		}
		if got := namesThing(c.line, what); got != c.want {
			t.Errorf("namesThing(%q, %q) = %v, want %v", c.line, what, got, c.want)
		}
	}
}
