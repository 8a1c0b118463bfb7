package schema

import (
	"slices"
	"testing"
)

// TestRereadKeepsAnEditedEntry: Reread reads an older record's entries again from their lines,
// but an entry that does not say what its line says (its flags edited, not its line) is kept
// as recorded: reading it again would judge the line and undo the edit, and an edited wrong
// outcome would replay as passed. An entry that agrees with its line is read again (its
// format, and flags["-"] counted). The parser here is a stand-in that reads the flags from the
// line's second word.
func TestRereadKeepsAnEditedEntry(t *testing.T) {
	parse := func(line string) (LogEntry, bool) {
		e := LogEntry{Line: line, Access: true, Code: 503, Format: "istio"}
		if f := line[4:6]; f != "--" {
			e.Flags = []string{f}
		}
		return e, true
	}
	old := LogResult{
		Lines: []string{"503 UC x", "503 -- y"},
		Count: 2,
		Entries: []LogEntry{
			{Line: "503 UC x", Access: true, Code: 503, Flags: []string{"UF"}}, // edited: the line says UC
			{Line: "503 -- y", Access: true, Code: 503},
		},
		Codes: map[string]float64{"503": 2}, Flags: map[string]float64{"UF": 1}, Details: map[string]float64{},
	}
	got := old.Reread(parse)
	if !slices.Equal(got.Entries[0].Flags, []string{"UF"}) || got.Entries[0].Format != "" {
		t.Errorf("edited entry read again: %+v", got.Entries[0])
	}
	if got.Entries[1].Format != "istio" {
		t.Errorf("agreeing entry not read again: %+v", got.Entries[1])
	}
	if got.Flags["UF"] != 1 || got.Flags["UC"] != 0 || got.Flags["-"] != 1 {
		t.Errorf("flags %v, want UF 1 (as recorded) and - 1", got.Flags)
	}
}
