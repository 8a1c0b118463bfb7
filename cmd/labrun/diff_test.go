package main

import (
	"strings"
	"testing"
)

// TestShowCutsLongValues: an exec's stdout in the diff table would widen every row to its length.
func TestShowCutsLongValues(t *testing.T) {
	long := strings.Repeat("0 200 backend-a\n", 20)
	got := show(long)
	if n := len([]rune(got)); n > maxShown+20 {
		t.Errorf("show(%d chars) = %q: %d runes, want at most %d", len(long), got, n, maxShown+20)
	}
	if !strings.HasSuffix(got, "… (342 chars)") {
		t.Errorf("show(long) = %q: want the length it cut, in characters of the value as written", got)
	}
	if got := show(4.0); got != "4" {
		t.Errorf("show(4) = %q", got)
	}
	if got := show(nil); got != "—" {
		t.Errorf("show(nil) = %q", got)
	}
}
