package dsl

import (
	"errors"
	"strings"
	"testing"
)

// TestLoadShareBound: a share of a load's requests (a count of its responses divided by its
// requests, 0 to 1; × 100: 0 to 100) compared with a bound it cannot meet never holds, and
// with a bound it cannot pass cannot fail, whatever the run records: refused at the
// comparison, saying what was meant (a percent written against a fraction). Before, vet
// accepted `fortio.code503 / fortio.requests >= 40` and `within(fortio.code503 /
// fortio.requests, 40, 60)`, which only a run found false. A share compared with a bound in
// its range, or a ratio of two loads' counts (not one load's share), is accepted.
func TestLoadShareBound(t *testing.T) {
	for _, c := range []struct {
		claim string
		want  string // "" accepted
	}{
		{"fortio.code503 / fortio.requests >= 40", "never holds"},
		{"fortio.code503 / fortio.requests > 1", "never holds"},
		{"fortio.ok / fortio.requests == 50", "never holds"},
		{"fortio.codes['503'] / fortio.requests >= 40", "never holds"},
		{"fortio.errors / fortio.requests < 0", "never holds"},
		{"fortio.code503 * 100 / fortio.requests >= 150", "never holds"},
		{"100 * fortio.code503 / fortio.requests > 100", "never holds"},
		{"fortio.code503 / fortio.requests * 100 > 100", "never holds"},
		{"within(fortio.code503 / fortio.requests, 40, 60)", "never holds"},
		{"approx(fortio.code503 / fortio.requests, 50, 0.2)", "never holds"},
		{"fortio.code503 / fortio.requests <= 10", "cannot fail"},
		{"within(fortio.code503 / fortio.requests, 0, 60)", "cannot fail"},
		{"fortio.code503 / fortio.requests >= 0.4", ""},
		{"fortio.code503 / fortio.requests == 1", ""},
		{"fortio.code503 * 100 / fortio.requests >= 40", ""},
		{"within(fortio.code503 * 100 / fortio.requests, 40, 60)", ""},
		{"approx(fortio.code503 / fortio.requests, 0.5, 0.2)", ""},
		{"other.code503 / fortio.requests >= 2", ""},
		{"fortio.code503 / other.requests >= 2", ""},
		{"fortio.requests / fortio.code503 >= 2", ""},
	} {
		_, path := writeLab(t, `s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "fortio", load: {url: "${backends.a.url}/echo", requests: 20}},
		{name: "other", load: {url: "${backends.a.url}/echo", requests: 50}},
	]
	expect: ["`+c.claim+`"]
}`)
		_, err := Load([]string{path}, Options{})
		var errs Errors
		errors.As(err, &errs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", c.claim, err)
		case c.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) || !strings.Contains(errs[0].Error(), "a share of fortio's requests")):
			t.Errorf("%s: %v, want one error: %s (a share of fortio's requests)", c.claim, err, c.want)
		}
	}
}
