package scenarios_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// strengths are the words of CLAIMS.md's strength column.
var strengths = []string{"exact", "relation", "bound", "none"}

// claimRow is one row of CLAIMS.md.
type claimRow struct {
	line                int
	n, seed, claim, why string
	scenarios, expects  []string
	strength            string
}

// cells splits a Markdown table row on the pipes that are not escaped (\|), and unescapes them.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// readClaims parses CLAIMS.md's table.
func readClaims(t *testing.T, text string) []claimRow {
	t.Helper()
	var rows []claimRow
	inTable := false
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		c := cells(line)
		if len(c) > 0 && c[0] == "#" {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(c[0], "---") {
			continue
		}
		if len(c) != 7 {
			t.Errorf("CLAIMS.md:%d: %d columns, want 7 (#, seed, claim, scenario, expectation, strength, why)", i+1, len(c))
			continue
		}
		r := claimRow{line: i + 1, n: c[0], seed: c[1], claim: c[2], strength: c[5], why: c[6]}
		if c[3] != "—" {
			for _, s := range strings.Split(c[3], ",") {
				r.scenarios = append(r.scenarios, strings.TrimSpace(s))
			}
		}
		if c[4] != "—" {
			for _, e := range strings.Split(c[4], "<br>") {
				m := codeSpan.FindStringSubmatch(strings.TrimSpace(e))
				if m == nil {
					t.Errorf("CLAIMS.md:%d: expectation %q is not in backticks", i+1, e)
					continue
				}
				r.expects = append(r.expects, m[1])
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// TestClaims keeps CLAIMS.md, the ledger of the seeds' claims, true: every expectation it names
// is one of its scenario's (so a changed expectation shows here), every expectation of a seed
// scenario encodes some claim, a claim without an expectation or with only a bound says why, and
// the summary counts the table. LABRUN_UPDATE=1 rewrites the summary line.
func TestClaims(t *testing.T) {
	b, err := os.ReadFile("CLAIMS.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	rows := readClaims(t, text)
	scs := byName(t)
	cited := map[string]bool{} // scenario + "\x00" + expectation
	count := map[string]int{}
	for i, r := range rows {
		at := fmt.Sprintf("CLAIMS.md:%d (claim %s)", r.line, r.n)
		if r.n != fmt.Sprint(i+1) {
			t.Errorf("%s: numbered %s, want %d", at, r.n, i+1)
		}
		if r.seed != "000" && r.seed != "002" && r.seed != "003" {
			t.Errorf("%s: seed %q, want 000, 002 or 003", at, r.seed)
		}
		known := false
		for _, s := range strengths {
			known = known || r.strength == s
		}
		if !known {
			t.Errorf("%s: strength %q, want one of %v", at, r.strength, strengths)
			continue
		}
		count[r.strength]++
		switch {
		case r.strength == "none" && (len(r.expects) > 0 || len(r.scenarios) > 0):
			t.Errorf("%s: a claim left unencoded names an expectation", at)
		case r.strength != "none" && len(r.expects) == 0:
			t.Errorf("%s: a claim without an expectation: mark it none and say why, or name the expectation", at)
		}
		if (r.strength == "none" || r.strength == "bound") && r.why == "" {
			t.Errorf("%s: a %s claim must say why (no tighter / not encoded)", at, r.strength)
		}
		srcs := map[string]bool{}
		for _, name := range r.scenarios {
			sc := scs[name]
			if sc == nil {
				t.Errorf("%s: no scenario %s", at, name)
				continue
			}
			used := false
			for _, e := range sc.Expect {
				srcs[name+"\x00"+e.Src] = true
				for _, x := range r.expects {
					if x == e.Src {
						used = true
					}
				}
			}
			if !used {
				t.Errorf("%s: none of the expectations named is %s's", at, name)
			}
		}
		for _, x := range r.expects {
			found := false
			for _, name := range r.scenarios {
				if srcs[name+"\x00"+x] {
					found = true
					cited[name+"\x00"+x] = true
				}
			}
			if !found {
				t.Errorf("%s: %s has no expectation `%s` (changed? update the ledger)", at, strings.Join(r.scenarios, ", "), x)
			}
		}
	}
	for _, name := range wantScenarios {
		for _, e := range scs[name].Expect {
			if !cited[name+"\x00"+e.Src] {
				t.Errorf("%s: expectation `%s` encodes no claim of CLAIMS.md", name, e.Src)
			}
		}
	}
	// The bar of issue 28: at least 145 claims, at least 140 of them exact or relation.
	if len(rows) < 145 || count["exact"]+count["relation"] < 140 {
		t.Errorf("%d claims, %d exact or relation: want at least 145 and 140", len(rows), count["exact"]+count["relation"])
	}
	summary := fmt.Sprintf("%d claims: %d exact, %d relation, %d bound, %d none.", len(rows), count["exact"], count["relation"], count["bound"], count["none"])
	re := regexp.MustCompile(`(?m)^(\d+ claims: .*|SUMMARY)$`)
	if cur := re.FindString(text); cur != summary {
		if os.Getenv("LABRUN_UPDATE") != "" {
			if err := os.WriteFile("CLAIMS.md", []byte(re.ReplaceAllLiteralString(text, summary)), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("CLAIMS.md's summary says %q, the table %q (LABRUN_UPDATE=1 go test ./scenarios -run TestClaims rewrites it)", cur, summary)
	}
}
