package interp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"labrun.dev/labrun/dsl"
)

// paramInline is the length of a parameter's JSON up to which a record keeps the parameter
// itself (Record.StepParams); a longer one (an apply's objects, a long command) it keeps as
// "sha256:<hex>" of that JSON. A digest's JSON is longer than paramInline, so a string
// parameter that looks like one is digested too: the two never read alike.
const paramInline = 64

// digestPrefix starts a parameter's digest.
const digestPrefix = "sha256:"

// StepParams are the parameters of every step of sc, by path, as a record keeps them
// (Record.StepParams): each step's parameters as the scenario declares them (its ${...} as
// written, its vars as the load resolved them) in canonical JSON, each top-level field whose
// JSON is longer than paramInline replaced by its digest, the secrets hidden by redact before
// anything is digested (a digest of a text holding a secret would let a short one be
// guessed). A block's steps are steps of their own: its parameters leave them out.
func StepParams(sc *dsl.Scenario, redact *Redactor) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if p, err := stepParams(s, redact); err == nil && p != nil {
				out[s.Path] = p
			}
		})
	}
	return out
}

// StepOptions are the step's own fields beside its kind of every step of sc that has any, by
// path, as a record keeps them (Record.StepOptions; see stepOptions).
func StepOptions(sc *dsl.Scenario, redact *Redactor) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if o, err := stepOptions(s, redact); err == nil && o != nil {
				out[s.Path] = o
			}
		})
	}
	return out
}

// stepOptions is the step's own fields beside its kind that change how it runs or how its
// failure counts, those it sets (nil when it sets none): its cluster (its block's when it
// names none), at, timeout, background, every, while, mayFail and expectFail (true, or its
// pattern), durations as Go writes them ("1.5s"), the secrets hidden by redact.
func stepOptions(s *dsl.Step, redact *Redactor) (json.RawMessage, error) {
	m := map[string]any{}
	if s.Cluster != "" {
		m["cluster"] = s.Cluster
	}
	if s.HasAt {
		m["at"] = s.At.String()
	}
	if s.Timeout > 0 {
		m["timeout"] = s.Timeout.String()
	}
	if s.Background {
		m["background"] = true
	}
	if s.Every > 0 {
		m["every"] = s.Every.String()
	}
	if s.While != "" {
		m["while"] = s.While
	}
	if s.MayFail {
		m["mayFail"] = true
	}
	if s.ExpectFail {
		m["expectFail"] = true
		if s.ExpectFailSrc != "" {
			m["expectFail"] = s.ExpectFailSrc
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	fields := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		var err error
		if fields[k], err = shortParam(v, redact); err != nil {
			return nil, err
		}
	}
	return json.Marshal(fields)
}

// changedOptions says how the step's own fields the record keeps of a step (recorded; nil:
// none) differ from those of s as the scenario declares it now ("" when they do not): the
// first field that differs, as changedParams says it.
func changedOptions(s *dsl.Step, recorded json.RawMessage, redact, hidden *Redactor) string {
	if recorded == nil {
		recorded = json.RawMessage("{}")
	}
	return diffUnder(recorded, "{}", "fields", func(r *Redactor) (json.RawMessage, error) { return stepOptions(s, r) }, redact, hidden)
}

// stepParams is the step's parameters as StepParams keeps them (nil when it has none).
func stepParams(s *dsl.Step, redact *Redactor) (json.RawMessage, error) {
	if s.Params == nil {
		return nil, nil
	}
	b, err := json.Marshal(s.Params)
	if err != nil {
		return nil, err
	}
	v, err := decodeCanonical(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return shortParam(v, redact)
	}
	fields := make(map[string]json.RawMessage, len(m))
	for k, f := range m {
		if fields[k], err = shortParam(f, redact); err != nil {
			return nil, err
		}
	}
	return json.Marshal(fields)
}

// shortParam is v in canonical JSON with the secrets hidden, or its digest when that is longer
// than paramInline.
func shortParam(v any, redact *Redactor) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = []byte(redact.String(string(b)))
	if len(b) <= paramInline && json.Valid(b) { // (a secret's mask put in the middle of a JSON escape: its digest)
		return b, nil
	}
	sum := sha256.Sum256(b)
	return json.Marshal(digestPrefix + hex.EncodeToString(sum[:]))
}

// decodeCanonical decodes JSON into data that marshals canonically: objects with their keys
// sorted, numbers as written.
func decodeCanonical(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// canonical is b, JSON, in canonical form (b itself when it is not JSON).
func canonical(b json.RawMessage) string {
	v, err := decodeCanonical(b)
	if err != nil {
		return string(b)
	}
	c, err := json.Marshal(v)
	if err != nil {
		return string(b)
	}
	return string(c)
}

// changedParams says how the parameters the record keeps of a step (recorded) differ from
// those of s as the scenario declares it now ("" when they do not): the first field that
// differs, with both values when the record keeps the value rather than its digest. The
// secrets are hidden first by redact, then, when that finds a difference, by hidden (see
// ChangedStep).
func changedParams(s *dsl.Step, recorded json.RawMessage, redact, hidden *Redactor) string {
	if recorded == nil {
		if p, err := stepParams(s, redact); err != nil || p == nil {
			return "" // parameters a run cannot keep (StepParams leaves them out): not compared
		}
		return "is in the record without the parameters it ran with, which the record keeps of every other step: the record was changed after the run or is corrupt"
	}
	return diffUnder(recorded, "null", "parameters", func(r *Redactor) (json.RawMessage, error) { return stepParams(s, r) }, redact, hidden)
}

// diffUnder compares recorded with what encode makes of the step now, its secrets hidden by
// redact, then (when that differs) by hidden: "" when either gives the same JSON, else the
// first difference under redact (paramsDiff). none is what encode's nil stands for; what
// names the values in the message of one that does not read as JSON.
func diffUnder(recorded json.RawMessage, none, what string, encode func(*Redactor) (json.RawMessage, error), redact, hidden *Redactor) string {
	was := canonical(recorded)
	var diff string
	for _, r := range []*Redactor{redact, hidden} {
		now, err := encode(r)
		if err != nil {
			return fmt.Sprintf("has %s that do not read as JSON: %v", what, err)
		}
		if now == nil {
			now = json.RawMessage(none)
		}
		if canonical(now) == was {
			return ""
		}
		if diff == "" {
			diff = paramsDiff(recorded, now)
		}
	}
	return diff
}

// paramsDiff says how the parameters was (the record's) and now (the scenario's) differ: the
// first field, by name, whose value differs.
func paramsDiff(was, now json.RawMessage) string {
	var wm, nm map[string]json.RawMessage
	if json.Unmarshal(was, &wm) != nil || json.Unmarshal(now, &nm) != nil || wm == nil || nm == nil {
		return valueDiff("parameters", was, now)
	}
	for _, k := range unionKeys(wm, nm) {
		w, inW := wm[k]
		n, inN := nm[k]
		switch {
		case !inN:
			return fmt.Sprintf("ran with %s %s and would now run without it", k, shownParam(w))
		case !inW:
			return fmt.Sprintf("ran without %s and would now run with %s %s", k, k, shownParam(n))
		case canonical(w) != canonical(n):
			return valueDiff(k, w, n)
		}
	}
	return valueDiff("parameters", was, now)
}

// valueDiff says that the value of what differs, with both values when neither is a digest.
func valueDiff(what string, was, now json.RawMessage) string {
	if isDigest(was) || isDigest(now) {
		if what == "parameters" {
			return "ran with parameters other than those it would now run with (the record keeps their digest, not their values)"
		}
		return fmt.Sprintf("ran with a %s other than the one it would now run with (the record keeps its digest, not its value)", what)
	}
	return fmt.Sprintf("ran with %s %s and would now run with %s %s", what, shownParam(was), what, shownParam(now))
}

// isDigest says whether b is a parameter's digest.
func isDigest(b json.RawMessage) bool {
	var s string
	return json.Unmarshal(b, &s) == nil && strings.HasPrefix(s, digestPrefix) && len(s) == len(digestPrefix)+2*sha256.Size
}

// shownParam is a parameter's value in a message: its compact JSON, < > & as they are (the
// record escapes them, as encoding/json does).
func shownParam(b json.RawMessage) string {
	v, err := decodeCanonical(b)
	if err != nil {
		return string(b)
	}
	var c bytes.Buffer
	e := json.NewEncoder(&c)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return string(b)
	}
	return strings.TrimSuffix(c.String(), "\n")
}
