package interp

import (
	"testing"

	"labrun.dev/labrun/dsl"
)

// A scenario loaded with a record's vars holds each secret's mask as its value: hidden already,
// it is left as it is (a swept secret's "[secret token #2]" read "[secret token]", and replay
// refused the record: its step would now run another command).
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
	} {
		if got := c.red.String(c.in); got != c.want {
			t.Errorf("%s: %q reads %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
