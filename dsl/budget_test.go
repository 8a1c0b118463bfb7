package dsl

import "testing"

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1GiB", 1 << 30, true}, {"512MiB", 512 << 20, true}, {"64M", 64 << 20, true},
		{"1000", 1000, true}, {"2GB", 2e9, true}, {"0", 0, true},
		{"lots", 0, false}, {"1.5GiB", 0, false}, {"-1", 0, false}, {"", 0, false},
	} {
		got, err := ParseBytes(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	for n, want := range map[uint64]string{1 << 30: "1GiB", 3 << 20: "3MiB", 1536: "1536B", 2048: "2KiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
