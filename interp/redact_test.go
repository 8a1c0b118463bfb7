package interp

import (
	"testing"

	"labrun.dev/labrun/dsl"
)

// A scenario loaded with a record's vars holds each secret's mask as its value: hidden already,
// it is left as it is (a swept secret's "[secret token #2]" read "[secret token]", and replay
// refused the record: its step would now run another command). SourceRedactor hides the
// values the source declares, a sweep's by their place in it, as the record of each run does.
func TestRedactorMasks(t *testing.T) {
	for _, c := range []struct {
		name string
		red  *Redactor
		in   string
		want string
	}{
		{"record's swept secret", NewRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "[secret token #2]"}}),
			"echo token=[secret token #2]", "echo token=[secret token #2]"},
		{"record's secret", NewRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "[secret token]"}}),
			"echo token=[secret token]", "echo token=[secret token]"},
		{"value that looks like a mask, but not one", NewRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "[secret token #x]"}}),
			"a [secret token #x]", "a [secret token]"},
		{"the run's value", NewRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "s3cr3t"}}),
			"echo token=s3cr3t", "echo token=[secret token]"},
		{"source: default and sweep", SourceRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "s3cr3t", "user": "admin"}, Sweep: map[string][]string{"token": {"hunter2", "s3cr3t"}, "user": {"root"}}}),
			"'s3cr3t' 'hunter2' admin root", "'[secret token #2]' '[secret token #1]' admin root"},
		{"source: no sweep", SourceRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "s3cr3t"}}),
			`{"expr": "x == 's3cr3t'"}`, `{"expr": "x == '[secret token]'"}`},
		{"source: no secrets", SourceRedactor(&dsl.Scenario{Vars: map[string]any{"token": "s3cr3t"}}),
			"s3cr3t", "s3cr3t"},
	} {
		if got := c.red.String(c.in); got != c.want {
			t.Errorf("%s: %q reads %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
