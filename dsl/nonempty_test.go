package dsl

import (
	"errors"
	"strings"
	"testing"
)

// TestQuantifiedStillTyped: a claim's all(), none() and count() hand their collection through
// __nonEmpty, typed any; expr still checks them as written: a predicate that is a number is
// refused at its column, as before.
func TestQuantifiedStillTyped(t *testing.T) {
	for _, expect := range []string{"all(f.pods, .requests)", "count(f.pods, .requests) == 0", "none(filter(f.pods, .requests > 1), .requests)"} {
		_, path := writeLab(t, `s: schema.#Scenario & {
	target: "kube"
	steps: [{name: "f", load: {url: "http://backend.lab:8080/", requests: 10, from: {selector: "app=client", pods: 2}}}]
	expect: ["`+expect+`"]
}`)
		_, err := Load([]string{path}, Options{})
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || !strings.Contains(errs[0].Error(), "x.cue:8:") || !strings.Contains(errs[0].Error(), "predicate should return boolean") {
			t.Errorf("%s: %v, want one error: predicate should return boolean", expect, err)
		}
	}
}

// TestNonEmpty: NonEmpty gives back a list or map with items, and says which collection of
// which call is empty otherwise.
func TestNonEmpty(t *testing.T) {
	for _, c := range []any{nil, []any{}, map[string]any{}, []string(nil)} {
		if _, err := NonEmpty("all(x, # > 0)", "x", c); err == nil || !strings.HasPrefix(err.Error(), "all(x, …) has no value: x is empty") {
			t.Errorf("%#v: %v", c, err)
		}
	}
	for _, c := range []any{[]any{1}, map[string]any{"a": 1}, "text"} {
		if got, err := NonEmpty("all(x, # > 0)", "x", c); err != nil || got == nil {
			t.Errorf("%#v: %v, %v", c, got, err)
		}
	}
}
