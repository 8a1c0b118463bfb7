// Package didyoumean finds what a user probably meant by a name that does not exist: the
// closest of the names that do, by edit distance. It imports nothing of labrun, so that every
// layer (the loader, Envoy's types, the drivers) suggests names the same way.
package didyoumean

import "strings"

// Distance is the edit distance between a and b, in runes, where swapping two adjacent
// runes counts as one edit (the commonest typo: "godo" for "good"; optimal string alignment);
// inputs longer than 256 runes are cut there (it serves did-you-mean suggestions, not exact
// comparison).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), 256)], rb[:min(len(rb), 256)]
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Closest returns the candidate nearest to s by edit distance (case-insensitive), if it is near
// enough to be a typo: at most a third of s's length, and at least one edit allowed.
func Closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := Distance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(1, len(s)/3) {
		return best
	}
	return ""
}
