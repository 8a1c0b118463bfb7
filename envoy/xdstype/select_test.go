package xdstype

import (
	"strings"
	"testing"
)

// TestReadAnyOptionalInUnknownMessage: below an Any of a message labrun does not know, a
// field left out errs (it cannot be told from a typo), unless it is read with ?., which
// takes a field left out as nil (the seed scenario cfg_portlevel writes
// `?.max_requests_per_connection ?? 0`).
func TestReadAnyOptionalInUnknownMessage(t *testing.T) {
	v := map[string]any{"@type": "type.googleapis.com/example.v9.Unknown", "present": map[string]any{"a": 1.0}}
	if got, err := ReadAny(v, "?present", "?missing"); err != nil || got != nil {
		t.Errorf("?.present?.missing: %v, %v; want nil, no error", got, err)
	}
	if _, err := ReadAny(v, "present", "missing"); err == nil || !strings.Contains(err.Error(), "labrun does not know") {
		t.Errorf("present.missing: %v; want an error saying the message is unknown", err)
	}
}
