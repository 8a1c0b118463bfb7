package interp

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"

	"labrun.dev/labrun/dsl"
)

// ValueContradictions says where the values that recorded expectations read are not what the
// same expressions read again from the record's data (judged, from Rejudge); nil when none
// is. An expectation is compared with the recorded one of the same source (the n-th of that
// source with the n-th), and only over the reads both hold: the data and the values of one
// run were written together, so a value that differs was edited after the run, or the data it
// was read from was. An edited vars is found so too: the judge reads vars from the record.
//
// The recorded source is the one the record writes, each secret's value hidden: hide hides
// the values of secrets that the scenario's source writes out itself (SourceRedactor; nil:
// none), which the scenario loaded with the record's vars does not hide. Before, an
// expectation whose source holds a secret's value ("vars.n == 1 || 's3cr3t' == 'x'") was
// compared with none, and a record whose vars.n was edited replayed FAILED, not refused as
// edited.
func ValueContradictions(recorded, judged []*Judgement, hide *Redactor) []string {
	seen := map[string]int{}
	var out []string
	for _, j := range judged {
		src := hide.String(j.Src)
		n := seen[src]
		seen[src]++
		r := nthWithSource(recorded, src, n)
		if r == nil || r.Values == nil || j.Values == nil {
			continue
		}
		reads := j.Values
		if hide != nil {
			// A read's name is its source, hidden in the record as the expectation's is.
			reads = make(Values, len(j.Values))
			for k, v := range j.Values {
				reads[hide.String(k)] = v
			}
		}
		for _, k := range slices.Sorted(maps.Keys(r.Values)) {
			now, ok := reads[k]
			if !ok {
				continue
			}
			if x, ok := r.Values[k].(float64); ok && timingRead.MatchString(k) {
				if y, ok := now.(float64); ok && math.Abs(x-y) <= 1e-6 {
					continue
				}
			}
			a, errA := MarshalUnescaped(JSONNumber(r.Values[k]))
			b, errB := MarshalUnescaped(JSONNumber(now))
			if errA != nil || errB != nil || string(a) == string(b) {
				continue
			}
			out = append(out, fmt.Sprintf("expectation %q: the record says it read %s = %s; its data read %s", r.Src, k, clip(string(a)), clip(string(b)))) // r.Src: as the record writes it
		}
	}
	return out
}

// UnrecordedVarReads says where an expectation that the run judged (passed or failed) reads a
// var by name over the record's data (judged, from Rejudge) and the record holds no value of
// it among the values that expectation read (as ValueContradictions, its source hidden with
// hide): a run writes every value an expectation reads with its judgement (records of version
// 2; those of version 1 hold none, and are not held to this). A var is what a record's data
// say least of: edited, it shows in the value an expectation recorded, and nowhere else when
// no step is built from it. With that value taken out too, a failed run whose maxShed was
// edited from 0 to 19 replayed and merged PASSED.
func UnrecordedVarReads(rec *Record, judged []*Judgement, hide *Redactor) []string {
	if rec.Version < 2 {
		return nil
	}
	seen := map[string]int{}
	var out []string
	for _, j := range judged {
		src := hide.String(j.Src)
		n := seen[src]
		seen[src]++
		r := nthWithSource(rec.Expectations, src, n)
		if r == nil || r.Outcome != Passed && r.Outcome != Failed {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(j.Values)) {
			if _, ok := r.Values[k]; !ok && varRead.MatchString(k) {
				out = append(out, fmt.Sprintf("expectation %q: the record holds no value of %s, which it reads: a run records every value an expectation reads", r.Src, k))
			}
		}
	}
	return out
}

// varRead matches the read of a var by its name.
var varRead = regexp.MustCompile(`^vars\.[A-Za-z_][A-Za-z0-9_]*$`)

// timingRead matches a read of started or ended. A record made before the judge read them
// from wall-clock times only (interp.NewJudge) read them from the run's monotonic clock,
// which drifts from the wall clock the record keeps by nanoseconds over a setup phase: those
// records are held to their data within a microsecond.
var timingRead = regexp.MustCompile(`\b(started|ended)\b`)

// nthWithSource is the n-th (from 0) of js whose source is src, or nil.
func nthWithSource(js []*Judgement, src string, n int) *Judgement {
	for _, j := range js {
		if j.Src != src {
			continue
		}
		if n == 0 {
			return j
		}
		n--
	}
	return nil
}

// clip shows at most 80 bytes of a value written in JSON, with its length when longer.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return dsl.Truncate(s, 80) + fmt.Sprintf(" (%d bytes)", len(s)) // as the judge shows a long string
}
