package suite

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Shards: --shard i/n splits a suite's jobs between n processes (CI jobs, the pods of an
// Indexed Job), each of which works out the same list of jobs and keeps its own part. The
// split is a function of the jobs alone — their ids, planned spans and footprints — so every
// process computes the same one: the shards' union is every job, no job is in two, for any n.
//
// Jobs that overlap (a fixed namespace, a mesh-wide host, a local address) are kept in one
// shard: shards may run at the same time on one cluster (the pods of a Job do), and the
// scheduler of a process keeps such jobs apart only within it. The groups of overlapping jobs
// are then dealt out longest first, each to the shard with the least planned time so far
// (then the fewest jobs, then the lowest index): the greedy longest-processing-time rule,
// whose longest shard is at most 4/3 of the best split's (Graham, 1969).

// ShardSpec is a shard: Index of Count, counting from 1.
type ShardSpec struct {
	Index, Count int
}

func (s ShardSpec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "i/n" (1 ≤ i ≤ n).
func ParseShard(s string) (ShardSpec, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return ShardSpec{}, fmt.Errorf("expected i/n, such as 1/4")
	}
	if n < 1 || i < 1 || i > n {
		return ShardSpec{}, fmt.Errorf("expected i/n with 1 ≤ i ≤ n, such as 1/4")
	}
	return ShardSpec{Index: i, Count: n}, nil
}

// Shards splits jobs into n shards and returns, for each, the indexes of its jobs in their
// order in jobs. n below 1 is 1.
func Shards(jobs []Job, n int) [][]int {
	n = max(n, 1)
	// Groups of jobs that overlap, directly or through others (union-find).
	parent := make([]int, len(jobs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range jobs {
		for j := i + 1; j < len(jobs); j++ {
			if _, ok := Overlaps(jobs[i].Resources, jobs[j].Resources); ok {
				if a, b := find(i), find(j); a != b {
					parent[max(a, b)] = min(a, b)
				}
			}
		}
	}
	type group struct {
		jobs    []int
		planned time.Duration
		first   string // the smallest id: a tie-break that does not depend on the order of jobs
	}
	byRoot := map[int]*group{}
	var groups []*group
	for i, j := range jobs {
		r := find(i)
		g := byRoot[r]
		if g == nil {
			g = &group{first: j.ID}
			byRoot[r] = g
			groups = append(groups, g)
		}
		g.jobs = append(g.jobs, i)
		g.planned += j.Planned
		g.first = min(g.first, j.ID)
	}
	sort.SliceStable(groups, func(a, b int) bool {
		ga, gb := groups[a], groups[b]
		if ga.planned != gb.planned {
			return ga.planned > gb.planned
		}
		if len(ga.jobs) != len(gb.jobs) {
			return len(ga.jobs) > len(gb.jobs)
		}
		return ga.first < gb.first
	})
	type shard struct {
		planned time.Duration
		jobs    []int
	}
	shards := make([]shard, n)
	for _, g := range groups {
		best := 0
		for s := 1; s < n; s++ {
			a, b := shards[s], shards[best]
			if a.planned < b.planned || a.planned == b.planned && len(a.jobs) < len(b.jobs) {
				best = s
			}
		}
		shards[best].planned += g.planned
		shards[best].jobs = append(shards[best].jobs, g.jobs...)
	}
	out := make([][]int, n)
	for s := range shards {
		out[s] = append([]int{}, shards[s].jobs...)
		sort.Ints(out[s])
	}
	return out
}
