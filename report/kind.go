package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// What a file given to replay, mutate or diff holds, so that a file of another kind (a summary
// of runs, a scenario, vet's or plan's output) is named instead of misread.

// The kinds of file.
const (
	KindRecord   = "run record"
	KindSummary  = "summary of runs"
	KindVet      = "vet result"
	KindPlan     = "plan"
	KindMutation = "mutation report"
	KindDiff     = "diff"
	KindReplay   = "replay result"
)

// Sniff says what the file at path, with contents b, holds: one of the kinds above, or a
// description of what it is instead ("a CUE file", "not JSON", "JSON that labrun did not
// write").
func Sniff(path string, b []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cue":
		return "a CUE file"
	case ".md":
		if !strings.HasSuffix(path, ".summary.md") {
			return "a Markdown file"
		}
		return "the Markdown of a " + KindSummary
	case ".html":
		return "an HTML page"
	case ".svg":
		return "an SVG picture"
	}
	var top any
	if err := json.Unmarshal(b, &top); err != nil {
		return "not JSON"
	}
	if list, ok := top.([]any); ok {
		if len(list) > 0 {
			if m, ok := list[0].(map[string]any); ok && has(m, "entries", "scenario") {
				return KindPlan
			}
		}
		return "a JSON list that labrun did not write"
	}
	m, ok := top.(map[string]any)
	if !ok {
		return "JSON that labrun did not write"
	}
	switch {
	case m["kind"] == SummaryKind, has(m, "runs", "scenario", "verdict"):
		return KindSummary
	case has(m, "version") && !has(m, "kind"):
		return KindRecord // its version is checked next
	case has(m, "ok", "files", "errors"):
		return KindVet
	case has(m, "mutants", "scenario"):
		return KindMutation
	case has(m, "differences", "verdicts"):
		return KindDiff
	case has(m, "scenario", "outcome", "expectations"):
		return KindReplay
	}
	return "JSON that labrun did not write"
}

func has(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// kindError says that path is not a run record, and what it is.
func kindError(path, kind string) error {
	what := kind
	switch kind {
	case "not JSON":
		return fmt.Errorf("%s: not a labrun run record: not JSON", path)
	case KindSummary, KindVet, KindPlan, KindMutation, KindDiff, KindReplay:
		what = "a " + kind
	}
	hint := "a run's record is the .json written beside its report (reports/<time>_<scenario>_<run id>.json)"
	if kind == KindSummary {
		hint = "a summary lists its runs: give one of their records (the .json beside each run's report)"
	}
	return fmt.Errorf("%s is %s, not a run record: %s", path, what, hint)
}
