package dsl

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFences checks the CommonMark fence rules Fences follows: backtick and tilde fences,
// at most three spaces of indentation, a closing fence of the same character at least as
// long and without an info string, no backtick in a backtick fence's info string.
func TestFences(t *testing.T) {
	type fence struct {
		Info          string
		Line, EndLine int
		Content       string
		Indent        int
		Marker        string
	}
	tests := []struct {
		name string
		doc  string
		want []fence
	}{
		{
			name: "backticks",
			doc:  "# t\n```cue labrun\na: 1\n```\n",
			want: []fence{{"cue labrun", 2, 4, "a: 1\n", 0, "```"}},
		},
		{
			name: "tildes",
			doc:  "~~~ cue labrun\na: 1\n~~~\n",
			want: []fence{{"cue labrun", 1, 3, "a: 1\n", 0, "~~~"}},
		},
		{
			name: "a byte order mark before the first fence",
			doc:  "\ufeff```cue labrun\na: 1\n```\n",
			want: []fence{{"cue labrun", 1, 3, "a: 1\n", 0, "```"}},
		},
		{
			name: "a byte order mark before an HTML comment: the fence in it is not one",
			doc:  "\ufeff<!--\n```cue labrun\na: 1\n```\n-->\n",
			want: nil,
		},
		{
			name: "two fences and prose",
			doc:  "p\n```sh\nls\n```\nq\n```cue\nb: 2\n```",
			want: []fence{{"sh", 2, 4, "ls\n", 0, "```"}, {"cue", 6, 8, "b: 2\n", 0, "```"}},
		},
		{
			name: "inside an HTML comment: not a fence",
			doc:  "<!--\n```cue labrun\na: 1\n```\n-->\n```cue\nb: 2\n```\n",
			want: []fence{{"cue", 6, 8, "b: 2\n", 0, "```"}},
		},
		{
			name: "inside <details> with no blank line after it: HTML text, not a fence",
			doc:  "<details>\n```cue labrun\na: 1\n```\n</details>\n",
			want: nil,
		},
		{
			name: "after <details> and a blank line: a fence",
			doc:  "<details>\n\n```cue labrun\na: 1\n```\n</details>\n",
			want: []fence{{"cue labrun", 3, 5, "a: 1\n", 0, "```"}},
		},
		{
			name: "HTML inside a fence is the fence's content",
			doc:  "```html\n<!--\n```\n```cue\nb: 2\n```\n-->\n",
			want: []fence{{"html", 1, 3, "<!--\n", 0, "```"}, {"cue", 4, 6, "b: 2\n", 0, "```"}},
		},
		{
			name: "inside <pre> until </pre>, blank lines included",
			doc:  "<pre>\n\n```cue\na: 1\n```\n</pre>\n",
			want: nil,
		},
		{
			name: "empty content",
			doc:  "```\n```\n",
			want: []fence{{"", 1, 2, "", 0, "```"}},
		},
		{
			name: "indented three spaces: content loses up to three spaces",
			doc:  "   ```cue\n     a: 1\n  b: 2\nc: 3\n   ```\n",
			want: []fence{{"cue", 1, 5, "  a: 1\nb: 2\nc: 3\n", 3, "```"}},
		},
		{
			name: "indented four spaces is indented code, not a fence",
			doc:  "    ```cue\n    a: 1\n    ```\n",
			want: nil,
		},
		{
			name: "closing fence longer than the opening one closes it",
			doc:  "```\nx\n`````\n",
			want: []fence{{"", 1, 3, "x\n", 0, "```"}},
		},
		{
			name: "closing fence shorter than the opening one does not close it",
			doc:  "````\n```\nx\n````\n",
			want: []fence{{"", 1, 4, "```\nx\n", 0, "````"}},
		},
		{
			name: "a tilde fence is not closed by backticks",
			doc:  "~~~\n```\n~~~\n",
			want: []fence{{"", 1, 3, "```\n", 0, "~~~"}},
		},
		{
			name: "a closing fence has no info string",
			doc:  "```\n``` cue\n```\n",
			want: []fence{{"", 1, 3, "``` cue\n", 0, "```"}},
		},
		{
			name: "a closing fence may be indented up to three spaces and followed by spaces",
			doc:  "```\nx\n   ```  \n",
			want: []fence{{"", 1, 3, "x\n", 0, "```"}},
		},
		{
			name: "a closing fence indented four spaces is content",
			doc:  "```\n    ```\n```\n",
			want: []fence{{"", 1, 3, "    ```\n", 0, "```"}},
		},
		{
			name: "two backticks are not a fence",
			doc:  "``\nx\n``\n",
			want: nil,
		},
		{
			// Line 1 is text, so line 3 opens a fence that is never closed. (The content of an
			// unclosed fence holds one more "\n" for the document's final newline.)
			name: "a backtick fence's info string cannot hold a backtick",
			doc:  "``` a`b\nx\n```\n",
			want: []fence{{"", 3, 0, "\n", 0, "```"}},
		},
		{
			name: "a tilde fence's info string may hold backticks",
			doc:  "~~~ a`b\nx\n~~~\n",
			want: []fence{{"a`b", 1, 3, "x\n", 0, "~~~"}},
		},
		{
			name: "never closed: runs to the end of the document",
			doc:  "x\n```cue labrun\na: 1\nb: 2\n",
			want: []fence{{"cue labrun", 2, 0, "a: 1\nb: 2\n\n", 0, "```"}},
		},
		{
			name: "CRLF line endings",
			doc:  "```cue\r\na: 1\r\n```\r\n",
			want: []fence{{"cue", 1, 3, "a: 1\n", 0, "```"}},
		},
		{
			name: "info string is trimmed",
			doc:  "```   cue   labrun   \nx\n```\n",
			want: []fence{{"cue   labrun", 1, 3, "x\n", 0, "```"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []fence
			for _, f := range Fences([]byte(tt.doc)) {
				got = append(got, fence{f.Info, f.Line, f.EndLine, f.Content, f.Indent, f.Marker})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Fences(%q)\n got %+v\nwant %+v", tt.doc, got, tt.want)
			}
		})
	}
}

func TestFenceIsSpec(t *testing.T) {
	tests := []struct {
		info string
		lang string
		spec bool
	}{
		{"cue labrun", "cue", true},
		{"cue   labrun", "cue", true},
		{"cue {labrun}", "cue", true},
		{"cue{.labrun}", "cue", true},
		{"cue {.labrun, title=x}", "cue", true},
		{"cue", "cue", false},
		{"cue labruns", "cue", false},
		{"labrun", "labrun", false},
		{"yaml labrun", "yaml", false},
		{"CUE labrun", "CUE", false},
		{"", "", false},
	}
	for _, tt := range tests {
		f := Fence{Info: tt.info}
		if got := f.Lang(); got != tt.lang {
			t.Errorf("Fence{Info: %q}.Lang() = %q, want %q", tt.info, got, tt.lang)
		}
		if got := f.IsSpec(); got != tt.spec {
			t.Errorf("Fence{Info: %q}.IsSpec() = %v, want %v", tt.info, got, tt.spec)
		}
	}
}

// TestSpecSource checks that the CUE made of a document keeps its line structure: spec lines
// stay where they are, every other line is blank.
func TestSpecSource(t *testing.T) {
	doc := "# t\n\n```cue labrun\na: 1\n```\nprose\n```cue\nb: 2\n```\n~~~ cue labrun\nc: 3\n~~~\n"
	got := string(specSource([]byte(doc), Fences([]byte(doc))))
	want := "\n\n\na: 1\n\n\n\n\n\n\nc: 3\n\n"
	if got != want {
		t.Errorf("specSource:\n got %q\nwant %q", got, want)
	}
	if a, b := strings.Count(got, "\n"), strings.Count(doc, "\n"); a != b {
		t.Errorf("specSource has %d lines, the document %d", a, b)
	}
}

// TestFenceNearMiss checks which fences naming labrun labrun would read as plain text: any
// that is a spec or an expected-output block only up to letter case, or spelled otherwise.
func TestFenceNearMiss(t *testing.T) {
	const asSpec = "a spec is spelled ```cue labrun, in lower case"
	const asExpect = "an expected-output block is spelled labrun-expect, in lower case"
	tests := []struct {
		info string
		want string
	}{
		{"cue labrun", ""},
		{"cue {.labrun, title=x}", ""},
		{"text labrun-expect", ""},
		{"cue labrun-expect", ""},
		{"cue", ""},
		{"text", ""},
		{"go", ""},
		{"cue Labrun", asSpec},
		{"CUE labrun", asSpec},
		{"Cue labrun", asSpec},
		{"Cue LABRUN", asSpec},
		{"CUE {labrun}", asSpec},
		{"cue{.LabRun}", asSpec},
		{"text Labrun-expect", asExpect},
		{"TEXT LABRUN-EXPECT", asExpect},
		{"text {.Labrun-Expect}", asExpect},
		{"cue-labrun", `"cue-labrun" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect)`},
		{"cue,labrun", `"cue,labrun" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect)`},
		{"yaml labrun", `"labrun" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect)`},
		{"text labrun-expected", `"labrun-expected" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect)`},
		{"text Labrun-Expected", `"Labrun-Expected" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect)`},
		// One or two letters off: before, read as plain text in silence (a document with
		// other specs raised nothing, and the misspelt spec's failing scenario never ran).
		{"cue labrn", `"labrn" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect): it looks like labrun misspelt`},
		{"cue lab-run", `"lab-run" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect): it looks like labrun misspelt`},
		{"cue {Lbrun}", `"Lbrun" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect): it looks like labrun misspelt`},
		{"text labrn-expect", `"labrn-expect" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect): it looks like labrun-expect misspelt`},
		{"text lab-run-expect", `"lab-run-expect" is neither a spec (` + "```cue labrun" + `) nor an expected-output block (labrun-expect): it looks like labrun-expect misspelt`},
		// Words further off are other languages' and tools' (and short ones match too much).
		{"cue labs", ""},
		{"cue run", ""},
		{"sh rerun", ""},
		{"text expect", ""},
		{"text ab", ""},
	}
	for _, tt := range tests {
		if got := (Fence{Info: tt.info}).NearMiss(); got != tt.want {
			t.Errorf("Fence{Info: %q}.NearMiss() = %q, want %q", tt.info, got, tt.want)
		}
	}
}

// TestUnreadFences checks that a fence CommonMark renders inside a list item or a blockquote,
// which Fences does not read, is found with its line, column and container, and that what is
// no fence to CommonMark (indented code, a fence's content) or what Fences reads is not.
// Before, such a fence was dropped silently: its spec never ran, its expected output was
// never compared.
func TestUnreadFences(t *testing.T) {
	type unread struct {
		Info      string
		Line, Col int
		Marker    string
		Container string
	}
	tests := []struct {
		name string
		doc  string
		want []unread
	}{
		{
			name: "in a numbered list item, indented four spaces",
			doc:  "# t\n\n1. The run shows:\n\n    ```text labrun-expect\n    scenario s: passed\n    ```\n",
			want: []unread{{"text labrun-expect", 5, 5, "```", "list item"}},
		},
		{
			name: "on the line of the list marker",
			doc:  "- ```cue labrun\n  a: 1\n  ```\n",
			want: []unread{{"cue labrun", 1, 3, "```", "list item"}},
		},
		{
			name: "in a nested list",
			doc:  "- a\n\n  - b\n\n      ~~~cue labrun\n      a: 1\n      ~~~\n",
			want: []unread{{"cue labrun", 5, 7, "~~~", "list item"}},
		},
		{
			name: "in a blockquote",
			doc:  "> ```cue labrun\n> a: 1\n> ```\n",
			want: []unread{{"cue labrun", 1, 3, "```", "blockquote"}},
		},
		{
			name: "in a list in a blockquote: the outer container",
			doc:  "> 1. x\n>\n>    ```cue labrun\n>    a: 1\n>    ```\n",
			want: []unread{{"cue labrun", 3, 6, "```", "blockquote"}},
		},
		{
			name: "a fence with another language in a list item is found too",
			doc:  "- x\n\n    ```sh labrun\n    ls\n    ```\n",
			want: []unread{{"sh labrun", 3, 5, "```", "list item"}},
		},
		{
			name: "indented code holding the words is no fence",
			doc:  "Prose.\n\n    ```cue labrun\n    a: 1\n    ```\n",
			want: nil,
		},
		{
			name: "a fence shown in a longer fence is content",
			doc:  "````markdown\n- x\n\n    ```cue labrun\n    a: 1\n    ```\n````\n",
			want: nil,
		},
		{
			name: "a fence in a list item indented at most three spaces is read",
			doc:  "- x\n\n  ```cue labrun\n  a: 1\n  ```\n",
			want: nil,
		},
		{
			name: "at the left margin",
			doc:  "```cue labrun\na: 1\n```\n\n```text labrun-expect\nx\n```\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []unread
			for _, f := range UnreadFences([]byte(tt.doc), Fences([]byte(tt.doc))) {
				got = append(got, unread{f.Info, f.Line, f.Indent + 1, f.Marker, f.Container})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestIndentedSpecLines checks which lines a document that holds no spec would have opened one
// with but for their indentation (an indented code block): not a fence's own content, and not
// a fence indented 3 spaces or less, which Fences reads.
func TestIndentedSpecLines(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []int
	}{
		{"tab", "# d\n\n\t```cue labrun\n\tpackage lab\n\t```\n", []int{3}},
		{"four spaces, CRLF", "# d\r\n\r\n    ~~~cue labrun\r\n    ~~~\r\n", []int{3}},
		{"three spaces is a fence", "# d\n\n   ```cue labrun\n   package lab\n   ```\n", nil},
		{"inside a fence", "```text\n    ```cue labrun\n```\n", nil},
		{"another language", "\t```yaml\n\t```\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			if got := indentedSpecLines(doc, Fences(doc)); !slices.Equal(got, tt.want) {
				t.Errorf("indentedSpecLines = %v, want %v", got, tt.want)
			}
		})
	}
}
