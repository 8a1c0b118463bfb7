package interp

import (
	"encoding/json"

	"labrun.dev/labrun/schema"
)

// RestoreTypes gives a record read from JSON the Go types expressions expect where JSON lost
// them (the target's endpoints).
func RestoreTypes(rec *Record) error {
	for _, k := range []string{"backends", "blackholes"} {
		v, ok := rec.TargetValues[k]
		if !ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var m map[string]schema.Endpoint
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		rec.TargetValues[k] = m
	}
	return nil
}

// Verdict is the outcome of a run given the judgements of its expectations: a run that did
// not reach its end keeps its own outcome (replay cannot judge what never ran).
func Verdict(rec *Record, judged []*Judgement) Outcome {
	switch rec.Outcome {
	case Passed, Failed:
	default:
		if rec.Error != "" && !allJudged(rec) {
			return rec.Outcome
		}
	}
	out := Passed
	for _, j := range judged {
		if j.Outcome == Failed || j.Outcome == Errored {
			out = Failed
		}
	}
	return out
}

func allJudged(rec *Record) bool {
	for _, j := range rec.Expectations {
		if j.Outcome == Skipped {
			return false
		}
	}
	return true
}
