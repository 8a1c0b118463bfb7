package dsl

import (
	"testing"

	"labrun.dev/labrun/schema"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"kitten", "sitting", 3},
		{"snapshto", "snapshot", 1}, // a swap is one edit
		{"godo", "good", 1},
		{"ab", "ba", 1},
		{"abc", "ca", 3},
		{"sleep", "slep", 1},
		{"µs", "us", 1}, // runes, not bytes
		{"connections", "conections", 1},
	}
	for _, tt := range tests {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := EditDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct {
		s          string
		candidates []string
		want       string
	}{
		{"snapshto", schema.KindNames(), "snapshot"},
		{"slep", schema.KindNames(), "sleep"},
		{"paralel", schema.KindNames(), "parallel"},
		{"Sleep", schema.KindNames(), "sleep"}, // case does not count
		{"frobnicate", schema.KindNames(), ""},
		{"conections", []string{"connections", "duration", "requests"}, "connections"},
		{"fortoi", []string{"delta", "fortio", "vars"}, "fortio"},
		// A short name allows one edit; a long one up to a third of its length.
		{"x", []string{"y"}, "y"},
		{"ab", []string{"cd"}, ""},
		{"expects", []string{"expect", "steps"}, "expect"},
		{"anything", nil, ""},
		// Ties go to the first candidate.
		{"b", []string{"a", "c"}, "a"},
	}
	for _, tt := range tests {
		if got := closest(tt.s, tt.candidates); got != tt.want {
			t.Errorf("closest(%q, %v) = %q, want %q", tt.s, tt.candidates, got, tt.want)
		}
	}
}

func TestQuotePath(t *testing.T) {
	tests := []struct {
		elems []string
		want  string
	}{
		{[]string{"steps", "0", "load"}, "steps[0].load"},
		{[]string{"local", "backends", "a"}, "local.backends.a"},
		{[]string{"headers", "X-Lab"}, `headers."X-Lab"`},
		{[]string{"#Step", "name"}, "#Step.name"},
		{[]string{"0"}, "[0]"},
	}
	for _, tt := range tests {
		if got := quotePath(tt.elems); got != tt.want {
			t.Errorf("quotePath(%q) = %q, want %q", tt.elems, got, tt.want)
		}
	}
}
