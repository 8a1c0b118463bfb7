package schema

import (
	"strings"
	"testing"
)

// TestReadOnlyIf: a field that has a value only where a boolean field is true reads as the
// field where it is, and is an error where it is not, on the run's structs and on the maps a
// record decodes to; the error is the field's OnlyIfWhy, or says that the condition is false.
func TestReadOnlyIf(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     any
		field string
		want  any
		err   string
	}{
		{"access line", LogEntry{Access: true, Code: 503}, "code", float64(503), ""},
		{"access line, no response", LogEntry{Access: true, Code: 0}, "code", float64(0), ""},
		{"access line by pointer", &LogEntry{Access: true, Flags: []string{"UF"}}, "flags", []string{"UF"}, ""},
		{"not an access line", LogEntry{Line: "ERROR x"}, "code", nil, "not an access line (its access is false) has no code"},
		{"not an access line, flags", LogEntry{Line: "ERROR x"}, "flags", nil, "has no flags"},
		{"map, access", map[string]any{"access": true, "code": 200.0}, "code", 200.0, ""},
		{"map, not access", map[string]any{"access": false, "line": "x"}, "path", nil, "has no path"},
		{"map without access", map[string]any{"line": "x"}, "code", nil, "has no code"},
	} {
		got, err := ReadOnlyIf(c.v, "access", c.field, notAccessWhy, "")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if gs, ok := got.([]string); ok {
			ws, _ := c.want.([]string)
			if strings.Join(gs, ",") != strings.Join(ws, ",") {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		} else if got != c.want {
			t.Errorf("%s: %v (%T), want %v", c.name, got, got, c.want)
		}
	}
	if _, err := ReadOnlyIf(LogEntry{}, "access", "code", "", ""); err == nil || err.Error() != "its access is false, so it has no code" {
		t.Errorf("without a why: %v, want the generic message", err)
	}
}
