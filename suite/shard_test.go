package suite

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestShards: for n = 1..4 (and more shards than jobs), every job is in exactly one shard;
// jobs that overlap share a shard; the split does not depend on the order of the jobs; and the
// longest shard is within the greedy rule's bound (4/3 of the best split, here of the mean or
// the longest group, whichever is larger).
func TestShards(t *testing.T) {
	ns := func(name string) []Resource { return []Resource{{Key: "namespace " + name, Why: "declares it"}} }
	mesh := []Resource{{Key: "mesh", Shared: true, Why: "runs on the mesh"}}
	suites := map[string][]Job{
		"nine, one swept": {
			{ID: "a#1", Planned: 2 * time.Second}, {ID: "b#1", Planned: 1 * time.Second},
			{ID: "c#1", Planned: 3 * time.Second}, {ID: "d#1", Planned: 500 * time.Millisecond},
			{ID: "e#1"}, {ID: "f#1"}, {ID: "g#1", Planned: 4 * time.Second}, {ID: "h#1", Planned: time.Second},
			{ID: "sweep[n=1]#1", Planned: time.Second}, {ID: "sweep[n=2]#1", Planned: time.Second},
			{ID: "sweep[n=3]#1", Planned: time.Second},
		},
		"unknown spans": {{ID: "a#1"}, {ID: "b#1"}, {ID: "c#1"}, {ID: "d#1"}, {ID: "e#1"}},
		"overlapping": {
			{ID: "x#1", Planned: time.Second, Resources: ns("one")}, {ID: "x#2", Planned: time.Second, Resources: ns("one")},
			{ID: "y#1", Planned: time.Second, Resources: append(ns("one"), ns("two")...)},
			{ID: "z#1", Planned: time.Second, Resources: ns("two")},
			{ID: "m1#1", Planned: time.Second, Resources: mesh}, {ID: "m2#1", Planned: time.Second, Resources: mesh},
			{ID: "free#1", Planned: 3 * time.Second},
		},
		"one":  {{ID: "only#1", Planned: time.Second}},
		"none": {},
	}
	for name, jobs := range suites {
		for n := 1; n <= 4; n++ {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				shards := Shards(jobs, n)
				if len(shards) != n {
					t.Fatalf("%d shards, want %d", len(shards), n)
				}
				seen := map[int]int{}
				var longest, total, group time.Duration
				for s, idx := range shards {
					var sum time.Duration
					for _, i := range idx {
						if prev, ok := seen[i]; ok {
							t.Errorf("job %s in shards %d and %d", jobs[i].ID, prev+1, s+1)
						}
						seen[i] = s
						sum += jobs[i].Planned
					}
					longest, total = max(longest, sum), total+sum
				}
				for i, j := range jobs {
					if _, ok := seen[i]; !ok {
						t.Errorf("job %s in no shard", j.ID)
					}
					group = max(group, j.Planned)
					for k := i + 1; k < len(jobs); k++ {
						if _, ok := Overlaps(j.Resources, jobs[k].Resources); ok && seen[i] != seen[k] {
							t.Errorf("%s and %s overlap but are in shards %d and %d", j.ID, jobs[k].ID, seen[i]+1, seen[k]+1)
						}
					}
				}
				if name == "overlapping" {
					group = 4 * time.Second // x#1, x#2, y#1, z#1 overlap through one another
				}
				if bound := max(total/time.Duration(n), group) * 4 / 3; longest > bound+time.Millisecond {
					t.Errorf("longest shard %s, bound %s", longest, bound)
				}
				// The same jobs in another order: the same shards (by id).
				rev := slices.Clone(jobs)
				slices.Reverse(rev)
				again := Shards(rev, n)
				for s := range shards {
					var a, b []string
					for _, i := range shards[s] {
						a = append(a, jobs[i].ID)
					}
					for _, i := range again[s] {
						b = append(b, rev[i].ID)
					}
					slices.Sort(a)
					slices.Sort(b)
					if !slices.Equal(a, b) {
						t.Errorf("shard %d: %v, reversed input %v", s+1, a, b)
					}
				}
			})
		}
	}
	// Unknown spans are dealt out by count: 5 jobs in 2 shards are 3 and 2.
	if s := Shards(suites["unknown spans"], 2); len(s[0]) != 3 || len(s[1]) != 2 {
		t.Errorf("unknown spans in 2 shards: %v", s)
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ShardSpec
		ok   bool
	}{
		{"1/4", ShardSpec{1, 4}, true}, {"4/4", ShardSpec{4, 4}, true}, {"1/1", ShardSpec{1, 1}, true},
		{"0/4", ShardSpec{}, false}, {"5/4", ShardSpec{}, false}, {"1/0", ShardSpec{}, false},
		{"1", ShardSpec{}, false}, {"a/b", ShardSpec{}, false}, {"-1/2", ShardSpec{}, false},
	} {
		got, err := ParseShard(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
