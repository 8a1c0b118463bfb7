package main

import (
	"strings"
	"testing"
)

func TestDiffLines(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b string // expected, got; lines separated by |
		want string // diff lines separated by |; "" when equal
	}{
		{"equal", "x|y", "x|y", ""},
		{"both empty", "", "", ""},
		{"changed line: expected first", "s: passed|c", "s: failed|c", "  - s: passed|  + s: failed|    c"},
		{"added at end", "x", "x|y", "    x|  + y"},
		{"removed in middle", "x|y|z", "x|z", "    x|  - y|    z"},
		{"two changes, one kept", "a|b|c", "A|b|C", "  - a|  + A|    b|  - c|  + C"},
		{"all new", "", "x|y", "  + x|  + y"},
	} {
		t.Run(c.name, func(t *testing.T) {
			split := func(s string) []string {
				if s == "" {
					return nil
				}
				return strings.Split(s, "|")
			}
			want := ""
			if c.want != "" {
				want = strings.ReplaceAll(c.want, "|", "\n") + "\n"
			}
			if got := diffLines(split(c.a), split(c.b)); got != want {
				t.Errorf("diffLines(%q, %q) =\n%s\nwant\n%s", c.a, c.b, got, want)
			}
		})
	}
}
