package dsl

import "unicode/utf8"

// Truncate shortens s to at most n characters (runes, not bytes, so a cut never splits a
// UTF-8 sequence), ending a shortened string with "…". Invalid UTF-8 in s is replaced.
func Truncate(s string, n int) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // replaces invalid bytes with U+FFFD
	}
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// TruncateStart shortens s to at most n characters by dropping its beginning, starting a
// shortened string with "…": for the tail of an output, where the last lines say most.
func TruncateStart(s string, n int) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-(n-1):])
}
