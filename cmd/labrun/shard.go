package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// elsewhere holds the scenarios (file and name) whose every run is in other shards.
	elsewhere map[[2]string]bool
	// plan identifies the runs of every shard (interp.ShardRecord.Plan).
	plan string
}

// parseShard reads --shard: i/n, or job/n in a pod of an Indexed Job (labrun job), whose
// shard is JOB_COMPLETION_INDEX+1 (the index counts from 0).
func (p *process) parseShard(s string) (suite.ShardSpec, error) {
	if n, ok := strings.CutPrefix(s, "job/"); ok {
		idx := p.Getenv("JOB_COMPLETION_INDEX")
		i, err := strconv.Atoi(idx)
		if idx == "" || err != nil || i < 0 {
			return suite.ShardSpec{}, &exitError{exitInvalid, fmt.Sprintf("--shard %s: JOB_COMPLETION_INDEX is %q: job/n is for the pods of a Kubernetes Indexed Job (labrun job), which set it to 0, 1, …; elsewhere give i/n", s, idx)}
		}
		s = fmt.Sprintf("%d/%s", i+1, n)
		if c, err := strconv.Atoi(n); err == nil && c >= 1 && i+1 > c {
			// Before: "--shard 3/2: expected i/n …", a flag the pod was never given.
			return suite.ShardSpec{}, &exitError{exitInvalid, fmt.Sprintf("--shard job/%s: JOB_COMPLETION_INDEX is %q, shard %d of %d: the Indexed Job has more completions than job/%s has shards; give it completions: %d (labrun job --shards %d renders it so)", n, idx, i+1, c, n, c, c)}
		}
	}
	spec, err := suite.ParseShard(s)
	if err != nil {
		return suite.ShardSpec{}, &exitError{exitInvalid, fmt.Sprintf("--shard %s: %v", s, err)}
	}
	return spec, nil
}

// keepShard keeps the units of shard spec, and the matrices that have some; src gives the
// sources of the split's files (planHash).
func (w *work) keepShard(spec suite.ShardSpec, target string, src *sourceHashes) {
	jobs, _ := jobsOf(w, target)
	shards := suite.Shards(jobs, spec.Count)
	sources := make([]string, len(w.units))
	for i, u := range w.units {
		sources[i] = src.of(u.Matrix.File)
	}
	sh := &shardOf{spec: spec, all: len(w.units), plan: planHash(w.units, sources)}
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
	sh.elsewhere = map[[2]string]bool{}
	for _, m := range w.matrices {
		if keep[m] {
			matrices = append(matrices, m)
		} else {
			sh.elsewhere[[2]string{m.File, m.Scenario}] = true
		}
	}
	w.units, w.matrices, w.shard = units, matrices, sh
}

// planHash identifies the runs of a split, the same on every machine that works them out from
// one checkout: "sha256:<hex>" of each unit's scenario file (its folder and name, as merge tells
// files apart: fileKey), scenario, id and the source of its file (sourceHashes.of; sources
// holds it per unit, nil for none), in order. Before, a shard's record kept only the number
// of runs of its split, and merge took shards of two scenario sets of as many runs for one
// split; then, without the sources, shards run from two checkouts (a scenario fixed between
// the CI jobs) were one split, and their merge said PASSED of a scenario that fails in the
// checkout the other shards ran, no scenario having records of two sources.
func planHash(units []*dsl.Unit, sources []string) string {
	keys := make([]string, 0, len(units))
	for i, u := range units {
		k := fileKey(u.Matrix.File) + "\x00" + u.Matrix.Scenario + "\x00" + u.ID
		if sources != nil {
			k += "\x00" + sources[i]
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sum := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(sum, "%s\n", k)
	}
	return "sha256:" + hex.EncodeToString(sum.Sum(nil))
}

// writeShardLine says which runs the shard holds: "shard 2/4: 3 of 11 runs, planned ≥2s of
// ≥9s".
func writeShardLine(w io.Writer, work *work) {
	sh := work.shard
	if sh == nil {
		return
	}
	if len(work.units) == 0 {
		fmt.Fprintf(w, "shard %s: no runs (the other shards hold all %d)\n", sh.spec, sh.all)
		return
	}
	fmt.Fprintf(w, "shard %s: %d of %d runs, planned ≥%s of ≥%s\n", sh.spec, len(work.units), sh.all, fmtSpan(sh.mine), fmtSpan(sh.planned))
}

// sourceHashes remembers the source hash of each scenario file (a nil one computes each
// time).
type sourceHashes struct {
	mu     sync.Mutex
	byFile map[string]string
}

// of is the source hash of the scenario declared in file: "sha256:<hex>" over the base name
// and content of the file and of the other .cue files of its folder (the package the file
// sees), in name order. Paths do not count, so the same checkout hashes the same on every
// machine. A file that cannot be read counts as empty.
func (h *sourceHashes) of(file string) string {
	if file == "" {
		return ""
	}
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if s, ok := h.byFile[file]; ok {
			return s
		}
	}
	files := []string{file}
	if strings.HasSuffix(file, ".cue") {
		sib, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "*.cue"))
		for _, f := range sib {
			if f != file {
				files = append(files, f)
			}
		}
		slices.Sort(files[1:])
	}
	sum := sha256.New()
	for _, f := range files {
		b, _ := os.ReadFile(f)
		fmt.Fprintf(sum, "%s\x00%d\x00", filepath.Base(f), len(b))
		sum.Write(b)
	}
	s := "sha256:" + hex.EncodeToString(sum.Sum(nil))
	if h != nil {
		if h.byFile == nil {
			h.byFile = map[string]string{}
		}
		h.byFile[file] = s
	}
	return s
}
