package dsl

import (
	"slices"
	"testing"
)

func TestPairBrackets(t *testing.T) {
	for _, tc := range []struct {
		src      string
		open     int // an opening bracket's offset
		close    int // the offset of the one closing it, -1: none
		unclosed []int
	}{
		{src: `f(x)[0]`, open: 1, close: 3},
		{src: `f(x)[0]`, open: 4, close: 6},
		{src: `a[")"]`, open: 1, close: 5},         // a bracket in a string is text
		{src: `a['\'' + "]"]`, open: 1, close: 12}, // an escaped quote does not end its string
		{src: "a[`\\`]", open: 1, close: 5},        // nothing is escaped in a raw string: \` ends it
		{src: `m({a: [1]}, "(")`, open: 1, close: 15},
		{src: `x && (y || [z`, open: 5, close: -1, unclosed: []int{5, 11}},
		{src: `"unclosed ( string`, open: 10, close: -1},
		{src: `é[0]`, open: 2, close: 4}, // bytes, not runes
		{src: `a) && (b`, open: 6, close: -1, unclosed: []int{6}},
	} {
		b := PairBrackets(tc.src)
		if got := b.Close(tc.open); got != tc.close {
			t.Errorf("%s: Close(%d) = %d, want %d", tc.src, tc.open, got, tc.close)
		}
		if tc.close >= 0 && b.Open(tc.close) != tc.open {
			t.Errorf("%s: Open(%d) = %d, want %d", tc.src, tc.close, b.Open(tc.close), tc.open)
		}
		if !slices.Equal(b.Unclosed, tc.unclosed) {
			t.Errorf("%s: Unclosed %v, want %v", tc.src, b.Unclosed, tc.unclosed)
		}
	}
}

func TestSkipStrings(t *testing.T) {
	for _, tc := range []struct {
		src  string
		i    int
		want int
	}{
		{`"ab" x`, 0, 4},
		{`'a\'b' x`, 0, 6},
		{"`a\\` x", 0, 4},
		{`"a" 'b' x`, 0, 3},
		{`"a""b" x`, 0, 6}, // two literals in a row
		{`x "a`, 2, 4},     // unclosed: the end
		{`x`, 0, 0},
		{`"\\" x`, 0, 4}, // an escaped backslash does not escape the quote
	} {
		if got := SkipStrings(tc.src, tc.i); got != tc.want {
			t.Errorf("SkipStrings(%s, %d) = %d, want %d", tc.src, tc.i, got, tc.want)
		}
	}
}

func TestByteOffset(t *testing.T) {
	for _, tc := range []struct {
		src  string
		r    int
		want int
	}{{"abc", 1, 1}, {"éa", 1, 2}, {"éa", 2, 3}, {"é", 5, 2}} {
		if got := ByteOffset(tc.src, tc.r); got != tc.want {
			t.Errorf("ByteOffset(%q, %d) = %d, want %d", tc.src, tc.r, got, tc.want)
		}
	}
}
