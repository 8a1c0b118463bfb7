package main

import (
	"fmt"
	"io"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/suite"
)

// Shards: --shard i/n keeps, of the units an invocation works out, those of shard i (package
// suite splits them: balanced by planned span, units that touch the same thing together).
// Every process given the same paths and flags works out the same units and the same split,
// so n processes run every unit once; labrun merge joins their records (merge.go).

// shardOf is the shard a work is, and what all the shards hold.
type shardOf struct {
	spec suite.ShardSpec
	// all is the number of units of every shard, planned their planned span.
	all     int
	planned time.Duration
	// mine is this shard's planned span.
	mine time.Duration
}

// keepShard keeps the units of shard spec, and the matrices that have some.
func (w *work) keepShard(spec suite.ShardSpec, target string) {
	jobs, _ := jobsOf(w, target)
	shards := suite.Shards(jobs, spec.Count)
	sh := &shardOf{spec: spec, all: len(w.units)}
	for _, j := range jobs {
		sh.planned += j.Planned
	}
	var units []*dsl.Unit
	keep := map[*dsl.Matrix]bool{}
	for _, i := range shards[spec.Index-1] {
		units = append(units, w.units[i])
		keep[w.units[i].Matrix] = true
		sh.mine += jobs[i].Planned
	}
	var matrices []*dsl.Matrix
	for _, m := range w.matrices {
		if keep[m] {
			matrices = append(matrices, m)
		}
	}
	w.units, w.matrices, w.shard = units, matrices, sh
}

// writeShardLine says which runs the shard holds: "shard 2/4: 3 of 11 runs, planned ≥2s of
// ≥9s".
func writeShardLine(w io.Writer, work *work) {
	sh := work.shard
	if sh == nil {
		return
	}
	if len(work.units) == 0 {
		fmt.Fprintf(w, "shard %s: no runs (the %d run%s are in the other shards)\n", sh.spec, sh.all, plural(sh.all))
		return
	}
	fmt.Fprintf(w, "shard %s: %d of %d runs, planned ≥%s of ≥%s\n", sh.spec, len(work.units), sh.all, fmtSpan(sh.mine), fmtSpan(sh.planned))
}
