package dsl

import (
	"errors"
	"strings"
	"testing"
)

// loadClaim loads a scenario with vars vars and one exec step "stamp" of argv, whose claim is
// its expectation, or, with assert, an assert after the step (its expectation then
// "stamp.exit == 0"): the claim at x.cue:8:11, or the assert at x.cue:7.
func loadClaim(t *testing.T, vars, argv, claim string, assert bool) (error, Errors) {
	t.Helper()
	steps := `{name: "stamp", exec: argv: ` + argv + `}`
	expect := claim
	if assert {
		steps += `, {assert: "` + claim + `"}`
		expect = "stamp.exit == 0"
	}
	_, path := writeLab(t, `s: schema.#Scenario & {
	vars: `+vars+`
	steps: [`+steps+`]
	expect: ["`+expect+`"]
}`)
	_, err := Load([]string{path}, Options{})
	var errs Errors
	errors.As(err, &errs)
	return err, errs
}

// TestClockOnlyClaimRefused: an expectation or an assert that reads the clock (now()) and
// nothing the run recorded — constants, date() and duration() of literals, vars — is refused
// at its position, saying it reads nothing the run recorded. Before, vet accepted
// `now() > date('2020-01-01')`: its vacuity check saw it could fail, as the clock moves, but
// whatever the run did it held. One that compares now() with a value the run recorded (a
// step's output, started, ended) is accepted.
func TestClockOnlyClaimRefused(t *testing.T) {
	for _, c := range []struct {
		claim   string
		assert  bool
		refused bool
	}{
		{"now() > date('2020-01-01')", false, true},
		{"now().Year() >= 2026", false, true},
		{"now() - date(vars.since) < duration('24h')", false, true},
		{"let t = now(); t.Hour() < 23 && t.Year() > 2000", false, true},
		{"now() > date('2020-01-01')", true, true},
		{"now().Weekday().String() != 'Sunday'", true, true},
		{"now() - date(trim(stamp.stdout)) < duration('1m')", false, false},
		{"now() - date(trim(stamp.stdout)) < duration('1m')", true, false},
		{"now().Unix() - ended.stamp > 0", false, false},
		{"now() > date('2020-01-01') && stamp.exit == 0", false, false},
		{"stamp.exit == 0", true, false},
	} {
		err, errs := loadClaim(t, `since: "2026-01-01T00:00:00Z"`, `["date", "-u", "+%Y-%m-%dT%H:%M:%SZ"]`, c.claim, c.assert)
		const why = `reads nothing the run recorded: only the clock (now()) and constants`
		switch {
		case c.refused && (len(errs) != 1 || !strings.Contains(errs[0].Error(), why)):
			t.Errorf("%s (assert %v): %v, want one error: %s", c.claim, c.assert, err, why)
		case c.refused && c.assert && !strings.Contains(errs[0].Error(), `x.cue:7:`):
			t.Errorf("%s (assert): %v, want it at the assert (x.cue:7)", c.claim, errs[0])
		case c.refused && !c.assert && !strings.Contains(errs[0].Error(), `x.cue:8:11: s.expect.0: expectation "`):
			t.Errorf("%s: %v, want it at the expectation (x.cue:8:11)", c.claim, errs[0])
		case !c.refused && err != nil:
			t.Errorf("%s (assert %v): %v, want it accepted", c.claim, c.assert, err)
		}
	}
}

// TestConstantAssertRefused: an assert that reads only vars and constants (no step's value,
// no delta, no time) is refused at its position, as an expectation like it is: it has the
// same value on every run. Before, vet refused `vars.n > 0` as an expectation and accepted it
// as an assert, where it held on every run, whatever the steps did.
func TestConstantAssertRefused(t *testing.T) {
	for _, c := range []struct {
		claim   string
		assert  bool
		refused bool
	}{
		{"vars.n > 0", true, true},
		{"vars.n > 0", false, true},
		{"1 < 2", true, true},
		{"true", true, true},
		{"vars.n > 0 && stamp.exit == 0", true, false},
		{"stamp.exit == vars.n - 3", true, false},
		{"ended.stamp > 0", true, false},
	} {
		err, errs := loadClaim(t, "n: 3", `["true"]`, c.claim, c.assert)
		const why = `reads nothing the run records: it has the same value on every run, so it proves nothing; expected one that reads a step's result, a snapshot, delta or a time`
		switch {
		case c.refused && (len(errs) != 1 || !strings.Contains(errs[0].Error(), why)):
			t.Errorf("%s (assert %v): %v, want one error: %s", c.claim, c.assert, err, why)
		case c.refused && c.assert && !strings.Contains(errs[0].Error(), `x.cue:7:58: s.steps.1.assert: assert "`+c.claim+`" `):
			t.Errorf("%s (assert): %v, want it at the assert (x.cue:7:58)", c.claim, errs[0])
		case c.refused && !c.assert && !strings.Contains(errs[0].Error(), `x.cue:8:11: s.expect.0: expectation "`):
			t.Errorf("%s: %v, want it at the expectation (x.cue:8:11)", c.claim, errs[0])
		case !c.refused && err != nil:
			t.Errorf("%s (assert %v): %v, want it accepted", c.claim, c.assert, err)
		}
	}
}
