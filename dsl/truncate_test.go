package dsl

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 4, "abc…"},
		{"café au lait", 4, "caf…"},
		{"cafés", 5, "cafés"},
		{"éééééé", 3, "éé…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"ab\xffcd", 10, "ab\uFFFDcd"},
		{"abc", 0, ""},
	} {
		got := Truncate(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(tc.n, 0) {
			t.Errorf("Truncate(%q, %d) = %q: invalid or too long", tc.in, tc.n, got)
		}
	}
	if got := TruncateStart("line1\nlinë2", 6); got != "…linë2" {
		t.Errorf("TruncateStart = %q", got)
	}
	long := strings.Repeat("é", 1000)
	if got := Truncate(long, 70); !utf8.ValidString(got) || utf8.RuneCountInString(got) != 70 {
		t.Errorf("Truncate of 1000 é: %d runes, valid %v", utf8.RuneCountInString(got), utf8.ValidString(got))
	}
}
