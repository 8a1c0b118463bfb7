package schema

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
		cut    bool
	}{
		{"fits", []string{"ab", "cd"}, "abcd", false},
		{"exactly", []string{"abcdef"}, "abcdef", false},
		{"one write over", []string{"abcdefghij"}, "abc\n… 4 bytes cut (the whole output, 10 bytes, is in the step's artifact file) …\nhij", true},
		{"many small writes", []string{"ab", "cd", "ef", "gh", "ij", "kl"}, "abc\n… 6 bytes cut (the whole output, 12 bytes, is in the step's artifact file) …\njkl", true},
		{"wraps the tail twice", []string{"abc", "d", "ef", "g", "hi", "j", "klm", "n"}, "abc\n… 8 bytes cut (the whole output, 14 bytes, is in the step's artifact file) …\nlmn", true},
		// é is 2 bytes, € 3: a cut inside either drops its bytes rather than show half of it.
		{"whole characters", []string{"aé€xyz€é"}, "aé\n… 9 bytes cut (the whole output, 14 bytes, is in the step's artifact file) …\né", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stream bytes.Buffer
			c := NewCapture(&stream, 3, 3)
			if tc.name == "whole characters" {
				c = NewCapture(&stream, 4, 3)
			}
			for _, w := range tc.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := c.Text(); got != tc.want {
				t.Errorf("Text() = %q, want %q", got, tc.want)
			}
			if c.Cut() != tc.cut {
				t.Errorf("Cut() = %v", c.Cut())
			}
			if all := strings.Join(tc.writes, ""); stream.String() != all || c.Size() != int64(len(all)) {
				t.Errorf("streamed %q (size %d), want everything: %q", stream.String(), c.Size(), all)
			}
		})
	}
}

// BenchmarkCapture: memory stays at head+tail however much is written.
func BenchmarkCapture(b *testing.B) {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	b.SetBytes(int64(len(chunk)))
	c := NewCapture(nil, OutputHead, OutputTail)
	for b.Loop() {
		_, _ = c.Write(chunk)
	}
}

// TestReadLinesAt: each line comes with where it starts in the input, "\r\n" and pieces of
// a line longer than MaxLine included.
func TestReadLinesAt(t *testing.T) {
	long := strings.Repeat("x", MaxLine+10)
	in := "a\r\nbc\n\n" + long + "\nlast"
	var got []string
	err := ReadLinesAt(context.Background(), strings.NewReader(in), func(b []byte, at int64) {
		got = append(got, fmt.Sprintf("%d:%d", at, len(b)))
	})
	if err != nil {
		t.Fatal(err)
	}
	// "\n" alone at 6 is an empty line; the long line comes in two pieces.
	want := fmt.Sprintf("0:1 3:2 6:0 7:%d %d:10 %d:4", MaxLine, 7+MaxLine, 7+MaxLine+11)
	if g := strings.Join(got, " "); g != want {
		t.Errorf("lines at %s, want %s", g, want)
	}
}
