package report_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labrun.dev/labrun/report"
)

// jsonEntry is one entry of a list or a map somewhere in a JSON document: its path (as
// interp.Record.NullEntries writes it), and whether it holds an object.
type jsonEntry struct {
	path   string
	object bool
	// set replaces the entry's value in its document.
	set func(any)
}

var plainJSONKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func joinJSONKey(at, key string) string {
	if !plainJSONKey.MatchString(key) {
		return fmt.Sprintf("%s[%q]", at, key)
	}
	if at == "" {
		return key
	}
	return at + "." + key
}

// jsonEntries are the entries of every list and object v holds, at any depth (a struct's
// fields are an object's entries too: JSON cannot tell them apart; the test says which paths
// are the record's parts).
func jsonEntries(v any, at string, out *[]jsonEntry) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			_, obj := x[k].(map[string]any)
			*out = append(*out, jsonEntry{path: joinJSONKey(at, k), object: obj, set: func(n any) { x[k] = n }})
			jsonEntries(x[k], joinJSONKey(at, k), out)
		}
	case []any:
		for i := range x {
			_, obj := x[i].(map[string]any)
			p := fmt.Sprintf("%s[%d]", at, i)
			*out = append(*out, jsonEntry{path: p, object: obj, set: func(n any) { x[i] = n }})
			jsonEntries(x[i], p, out)
		}
	}
}

// A record with a null where labrun always writes an entry (a step, a result, an
// expectation, a sample of a series) made replay, merge, mutate and diff panic: the code that
// reads a record reads each entry as a part. Each entry of a real run's record (a load,
// snapshots, a series, an exec, expectations) is nulled in turn: reading the record must not
// panic, and an entry that is a part of the record (a JSON object anywhere but in the
// JSON-like values: vars, targetValues, a result's fields) must be refused, naming the
// entry's JSON path.
func TestDecodeRefusesNullEntries(t *testing.T) {
	const file = "testdata/record-parts.json"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Decode(file, b); err != nil {
		t.Fatalf("the record as the run wrote it: %v", err)
	}
	var probe any
	if err := json.Unmarshal(b, &probe); err != nil {
		t.Fatal(err)
	}
	var entries []jsonEntry
	jsonEntries(probe, "", &entries)
	// The parts: the entries of the record's lists and maps of parts, and the value of each
	// result (a field, not an entry, but the record of the step: no run writes it null).
	isPart := regexp.MustCompile(`^(steps\[\d+\]|results\.\w+|results\.\w+\.value|expectations\[\d+\]|results\.\w+\.value\.samples\[\d+\]|artifacts\[\d+\])$`)
	// A stat: encoding/json reads a null as 0, a count no snapshot recorded.
	isStat := regexp.MustCompile(`\.(counters|gauges)(?:\.(\w+)|\[("[^"]*")\])$`)
	parts := 0
	for i, e := range entries {
		t.Run(e.path, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			var mine []jsonEntry
			jsonEntries(doc, "", &mine)
			mine[i].set(nil)
			edited, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var rerr error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s null: Decode panicked: %v", e.path, p)
					}
				}()
				_, rerr = report.Decode("RUN.json", edited)
			}()
			if m := isStat.FindStringSubmatch(e.path); m != nil {
				key := m[2]
				if key == "" {
					key, _ = strconv.Unquote(m[3])
				}
				want := fmt.Sprintf("RUN.json: stat %q is null, where a snapshot always records a number", key)
				if rerr == nil || rerr.Error() != want {
					t.Errorf("%s null: got %v, want %s", e.path, rerr, want)
				}
				return
			}
			if !isPart.MatchString(e.path) {
				return
			}
			parts++
			want := fmt.Sprintf("RUN.json: %s is null, where a run always records an entry; the record was changed after the run or is corrupt", e.path)
			if rerr == nil || rerr.Error() != want {
				t.Errorf("%s null: got %v, want %s", e.path, rerr, want)
			}
		})
	}
	// The fixture holds every kind of part: a change to it that dropped one would test less.
	for _, p := range []string{"steps[0]", "results.fortio", "results.busy.value", "results.q.value", "expectations[0]", "results.busy.value.samples[0]", "artifacts[0]"} {
		if !slices.ContainsFunc(entries, func(e jsonEntry) bool { return e.path == p }) {
			t.Errorf("the record has no %s", p)
		}
	}
	if parts == 0 || !strings.Contains(string(b), `"samples"`) {
		t.Errorf("nothing checked: %d parts", parts)
	}
}
