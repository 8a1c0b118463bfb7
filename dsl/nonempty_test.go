package dsl

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr/parser"
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
		if _, err := NonEmpty("all(x, …)", "x", "all(x, # > 0)", false, c); err == nil || !strings.HasPrefix(err.Error(), "all(x, …) has no value: x is empty") {
			t.Errorf("%#v: %v", c, err)
		}
	}
	for _, c := range []any{[]any{1}, map[string]any{"a": 1}, "text"} {
		if got, err := NonEmpty("all(x, …)", "x", "all(x, # > 0)", false, c); err != nil || got == nil {
			t.Errorf("%#v: %v, %v", c, got, err)
		}
	}
}

// TestEmptyRule: which builtins of a claim, or of an until, hand their collection through
// __nonEmpty: every builtin whose value over an empty collection is the same whatever it asks
// (len(filter(x, p)) == 0, sum(map(x, .n)) == 0, !any(x, p)…), unless the collection is read
// in another operand of &&, || or ?: (a read in the same comparison, count(x, p) == len(x),
// says nothing of an empty one), first() and last() whose nil ?. or ?? makes a value
// ((first(x)?.f ?? 0) == 0); not sortBy, len, first(x) == nil, nor a collection of vars,
// literals or an enclosing item. An until's are the same: before, only its all() (and those
// whose collection the same comparison read again) were, and none(x, p), count(x, p) == 0 or
// (first(x)?.f ?? 0) == 0 held at once over an empty x.
func TestEmptyRule(t *testing.T) {
	for _, c := range []struct {
		src     string
		wrapped []string // the calls wrapped
	}{
		{"all(log.entries, .code != 503)", []string{"all(log.entries, …)"}},
		{"none(log.entries, .code == 503)", []string{"none(log.entries, …)"}},
		{"count(log.entries, .code == 503) == 0", []string{"count(log.entries, …)"}},
		{"count(log.entries, .code == 200) == len(log.entries)", []string{"count(log.entries, …)"}},
		{"len(filter(log.entries, .code == 503)) == 0", []string{"filter(log.entries, …)"}},
		{"len(filter(log.entries, .code == 200)) == len(log.entries)", []string{"filter(log.entries, …)"}},
		{"sum(map(log.entries, .code)) == 0", []string{"sum(map(log.entries, .code))", "map(log.entries, …)"}},
		{"sum(log.entries, .code) == 0 && mean(fortio.pods) > 1", []string{"sum(log.entries, …)", "mean(fortio.pods)"}},
		{"!any(log.entries, .code == 503) && !one(log.entries, .code == 503)", []string{"any(log.entries, …)", "one(log.entries, …)"}},
		{"find(log.entries, .code == 503) == nil && findIndex(log.entries, .code == 503) == -1", []string{"find(log.entries, …)", "findIndex(log.entries, …)"}},
		{"reduce(log.entries, #acc + .code, 0) == 0 && len(groupBy(log.entries, .code)) == 1", []string{"reduce(log.entries, …)", "groupBy(log.entries, …)"}},
		{"len(log.entries) == 0 || all(log.entries, .code != 503)", nil},
		{"len(log.entries) > 0 && count(log.entries, .code == 200) == len(log.entries)", nil},
		{"len(log.entries) > 0 ? sum(map(log.entries, .code)) > 0 : true", []string{"sum(map(log.entries, .code))"}}, // non-empty where log.entries is
		{"let n = len(log.entries); n > 0 && all(log.entries, .code != 503)", nil},
		{"len(sortBy(log.entries, .code)) == 0 && first(log.entries) == nil && max(fortio.p50, 3) > 1", nil},
		{"(first(log.entries)?.code ?? 0) == 0", []string{"first(log.entries)"}},
		{"last(log.entries)?.code != 503 && (first(log.entries) ?? {}).code == nil", []string{"last(log.entries)", "first(log.entries)"}},
		{"first(log.entries).code == 200 && last(log.entries) != nil", nil}, // errs over [], or reads the list itself
		{"len(log.entries) > 0 && (first(log.entries)?.code ?? 0) == 200", nil},
		{"all(log.entries, (first(.flags)?.x ?? 0) == 0)", []string{"all(log.entries, …)"}}, // an item's own list
		{"all(vars.list, # > 0) && sum([1, 2]) == 3 && all(pods.items, all(.spec.containers, .ready))", []string{"all(pods.items, …)"}},
	} {
		tree, err := parser.Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		var got []string
		for _, q := range quantifiedOf(tree.Node) {
			got = append(got, q.call)
		}
		if !slices.Equal(got, c.wrapped) {
			t.Errorf("%s: wrapped %q, want %q", c.src, got, c.wrapped)
		}
	}
}

// TestQuantifiedOfWritesNothingOut: an expression with no builtin to judge is walked once, its
// nodes' texts never written (they are counted only to judge a builtin found: writing out every
// node of every expression was a quarter of compiling the repository's).
func TestQuantifiedOfWritesNothingOut(t *testing.T) {
	tree, err := parser.Parse(`delta.upstream_rq_pending_overflow == fortio.code503 && fortio.code200 + fortio.code503 == vars.requests && within(fortio.p99, 0, 200) && outcome.load == "passed" && (vars.connections > 1 ? fortio.qps > 10 : true)`)
	if err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(20, func() { quantifiedOf(tree.Node) }); allocs > 40 {
		t.Errorf("quantifiedOf of an expression without builtins: %v allocations, want at most 40", allocs)
	}
}
