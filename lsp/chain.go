package lsp

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// The end of an expression being written: the member chain before the word at the cursor
// (mid.circuit_breakers for mid.circuit_breakers.def) and the word itself.

// isNameByte reports whether b can be part of an expression's name.
func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// trailingWord is the name src ends with.
func trailingWord(src string) string {
	i := len(src)
	for i > 0 && isNameByte(src[i-1]) {
		i--
	}
	return src[i:]
}

// leadingWord is the name src starts with.
func leadingWord(src string) string {
	i := 0
	for i < len(src) && isNameByte(src[i]) {
		i++
	}
	return src[:i]
}

// tail splits src at its end into the member chain before the last word and that word:
// "delta.rq_to" → ("delta", "rq_to", true); "x > fo" → ("", "fo", false).
func tail(src string) (chain, word string, dotted bool) {
	word = trailingWord(src)
	i := len(src) - len(word)
	if i == 0 || src[i-1] != '.' {
		return "", word, false
	}
	j := chainStart(src, i-1)
	chain = src[j : i-1]
	if chain == "" || chain[0] >= '0' && chain[0] <= '9' {
		return "", word, false // a number's fraction, not a member
	}
	return chain, word, true
}

// chainStart is where the member chain ending at end starts: names, dots, and balanced
// (...) and [...] (a call's arguments, an index).
func chainStart(src string, end int) int {
	var pairs *dsl.Brackets
	j := end
	for j > 0 {
		c := src[j-1]
		switch {
		case isNameByte(c) || c == '.':
			j--
		case c == ')' || c == ']':
			if pairs == nil {
				b := dsl.PairBrackets(src)
				pairs = &b
			}
			open := pairs.Open(j - 1)
			if open < 0 {
				return j
			}
			j = open
		default:
			return j
		}
	}
	return j
}

// segments splits a chain at its dots outside brackets and strings.
func segments(chain string) []string {
	var out []string
	depth, start := 0, 0
	for i := dsl.SkipStrings(chain, 0); i < len(chain); i = dsl.SkipStrings(chain, i+1) {
		switch chain[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '.':
			if depth == 0 {
				out = append(out, chain[start:i])
				start = i + 1
			}
		}
	}
	return append(out, chain[start:])
}

// member is what a chain reads, typed: the type of the whole, and, when the chain goes
// into a stats map, the stats map and the stat; when it ends with a field, the field and
// the type it is a field of.
type member struct {
	typ *schema.Type
	// stats is the stats map a stat name is read from, statAt how many segments lead to it.
	stats  *schema.Type
	statAt int
	stat   string
	field  *schema.Field
}

// typeChain types the chain's segments against names, as vet types them, after the lets in
// force (letsInForce: "let l = fortio; ", for l.requests).
func typeChain(n *dsl.Names, lets string, segs []string) *member {
	if n == nil || len(segs) == 0 {
		return nil
	}
	m := &member{}
	var parent *schema.Type
	for k := 1; k <= len(segs); k++ {
		t := n.TypeOf(lets + strings.Join(segs[:k], "."))
		if t == nil {
			return nil
		}
		if t.Kind == schema.TStats && k < len(segs) {
			if f := t.Field(segs[k]); f != nil && k+1 == len(segs) {
				m.typ, m.field = f.Type, f
				return m
			}
			m.stats, m.statAt, m.stat = t, k, strings.Join(segs[k:], ".")
			m.typ = schema.NumberType
			if t.Stats != nil && t.Stats.Catalogue != nil {
				if st, ok := t.Stats.Catalogue.Lookup(m.stat); ok {
					m.typ = schema.Num(st.Unit)
				}
			}
			return m
		}
		if k > 1 && parent != nil {
			m.field = parent.Field(segs[k-1])
		}
		parent, m.typ = t, t
	}
	return m
}

// sortedNames are a map's keys, sorted.
func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// scope is what an expression of a step can read at its point of the timeline.
type scope struct {
	sc   *dsl.Scenario
	step *dsl.Step
	// ran are the steps the expression written before the cursor reads only where they ran
	// (has(ended, "why"), outcome.why != 'skipped'): a catch step is readable there.
	ran map[string]bool
}

// scopeAt is the scope of an expression of step (nil: the expectations) whose text before
// the cursor is src.
func scopeAt(sc *dsl.Scenario, step *dsl.Step, src string) scope {
	sp := scope{sc: sc, step: step}
	for _, m := range ranGuardRE.FindAllStringSubmatch(src, -1) {
		step := m[1] + m[2]
		if m[2] != "" {
			// outcome.why != 'skipped', == 'passed', or == 'skipped' || …: it ran beyond.
			skipped := m[4] == "skipped"
			if m[3] == "==" && skipped && !strings.HasPrefix(strings.TrimSpace(m[5]), "||") || m[3] == "!=" && !skipped {
				continue
			}
		}
		if sp.ran == nil {
			sp.ran = map[string]bool{}
		}
		sp.ran[step] = true
	}
	return sp
}

// ranGuardRE is a guard that a step ran, as vet reads one (Read.Ran): has(ended, "why"),
// has(started, 'why'), has(error, …), outcome.why != 'skipped', outcome.why == 'passed',
// outcome.why == 'skipped' || ….
var ranGuardRE = regexp.MustCompile(`has\(\s*(?:ended|started|error)\s*,\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*\)|outcome\.([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=)\s*["']([a-z]*)["']\)?(\s*(?:\|\||&&)?)`)

// readable reports whether the step can read r when it evaluates its expression (the
// expectations, judged at the end, read every step but the catch's).
func (s scope) readable(r dsl.Read) bool {
	r.Ran = r.Ran || s.ran[r.Step]
	return s.sc.Unavailable(s.step, r) == ""
}

// readableStep reports whether the step can read anything of the result of the step named
// name: the whole, or a field that exists earlier (live while it runs).
func (s scope) readableStep(name string) bool {
	if s.readable(dsl.Read{Step: name}) {
		return true
	}
	res := s.sc.ExprNames.Results[name]
	if res == nil {
		return false
	}
	for _, f := range res.Type.Fields {
		if s.readable(dsl.Read{Step: name, Field: f.Name}) {
			return true
		}
	}
	return false
}

// deltaTaken are the snapshots that can have been taken when the scope's expression is
// judged: a step's plain delta is the first and the last of them (the expectations' is the
// plan's pair, DeltaFrom and DeltaTo).
func (s scope) deltaTaken() []string {
	var taken []string
	for _, t := range s.sc.Snapshots {
		if s.readable(dsl.Read{Step: t.Name}) {
			taken = append(taken, t.Name)
		}
	}
	return taken
}

// plainDelta reports whether the scope's expression can read the plain delta: the scenario
// has one, and, judged while the run is under way, two snapshots can have been taken.
func (s scope) plainDelta() bool {
	n := s.sc.ExprNames
	return n.DeltaErr == "" && (s.step == nil || len(s.deltaTaken()) >= 2)
}

// whyNot says why the step cannot read r ("" when it can).
func (s scope) whyNot(r dsl.Read) string {
	r.Ran = r.Ran || s.ran[r.Step]
	return s.sc.Unavailable(s.step, r)
}

// stepMaps are the names whose keys are step names: what each holds of a step.
var stepMaps = map[string]string{
	"started": "when the step started (seconds since the run began)",
	"ended":   "when the step ended (seconds since the run began)",
	"outcome": "what became of the step: passed, failed, error, skipped, interrupted or running",
	"error":   "the step's error message (\"\" when it had none)",
}

// deltaArgPrefixes are the calls whose string arguments name snapshots: delta("be,
// deltaAcross("a", "af.
var deltaArgPrefixes = []string{"delta(", "deltaAcross("}

// inDeltaArg reports whether src ends inside a string argument of delta or deltaAcross,
// and the part of the name written.
func inDeltaArg(src string) (string, bool) {
	a, ok := deltaArgAt(src)
	return a.word, ok
}

// deltaArg is the string argument of delta or deltaAcross being written: the name written so
// far, the function, and the first argument when it is the second.
type deltaArg struct {
	word, call, first string
}

// deltaArgAt is the argument src ends inside (false: none).
func deltaArgAt(src string) (deltaArg, bool) {
	word := trailingWord(src)
	i := len(src) - len(word)
	if i == 0 || src[i-1] != '"' && src[i-1] != '\'' {
		return deltaArg{}, false
	}
	first := ""
	before := strings.TrimRight(src[:i-1], " ")
	if strings.HasSuffix(before, ",") {
		// the second argument: the first must be a string of the same call
		b := strings.TrimRight(strings.TrimSuffix(before, ","), " ")
		if len(b) == 0 || b[len(b)-1] != '"' && b[len(b)-1] != '\'' {
			return deltaArg{}, false
		}
		q := b[len(b)-1]
		open := strings.LastIndexByte(b[:len(b)-1], q)
		if open < 0 {
			return deltaArg{}, false
		}
		first = b[open+1 : len(b)-1]
		before = strings.TrimRight(b[:open], " ")
	}
	for _, p := range deltaArgPrefixes {
		if strings.HasSuffix(before, p) && (len(before) == len(p) || !isNameByte(before[len(before)-len(p)-1])) {
			return deltaArg{word: word, call: strings.TrimSuffix(p, "("), first: first}, true
		}
	}
	return deltaArg{}, false
}

// letBinding is a let's name and the source of its value.
type letBinding struct{ name, value string }

// letsInForce are the bindings written before the end of src that are in force there
// (let l = fortio; l.), in order. A let whose brackets closed before the end is out of its
// scope; one whose value is still being written binds nothing.
func letsInForce(src string) []letBinding {
	type open struct {
		letBinding
		start int // where the value starts in src
		depth int
		done  bool
	}
	var lets []open
	depth := 0
	for i := dsl.SkipStrings(src, 0); i < len(src); i = dsl.SkipStrings(src, i+1) {
		c := src[i]
		switch {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			// The scope of a let inside the brackets ends with them.
			lets = slices.DeleteFunc(lets, func(l open) bool { return l.depth > depth })
		case c == ';':
			if k := len(lets) - 1; k >= 0 && !lets[k].done && lets[k].depth == depth {
				lets[k].done, lets[k].value = true, strings.TrimSpace(src[lets[k].start:i])
			}
		case strings.HasPrefix(src[i:], "let ") && (i == 0 || !isNameByte(src[i-1]) && src[i-1] != '.'):
			rest := strings.TrimLeft(src[i+4:], " \t\n")
			name := leadingWord(rest)
			after := strings.TrimLeft(rest[len(name):], " \t\n")
			if name == "" || !strings.HasPrefix(after, "=") || strings.HasPrefix(after, "==") {
				continue
			}
			start := len(src) - len(after) + 1
			lets = append(lets, open{letBinding: letBinding{name: name}, start: start, depth: depth})
			i = start - 1
		}
	}
	var out []letBinding
	for _, l := range lets {
		if l.done {
			out = append(out, l.letBinding)
		}
	}
	return out
}

// letPrefix is "let name = value; " for each of lets that root reads, directly or through
// the value of another, to write before a chain from root so that it types as vet types it
// (vet refuses a let nothing reads, and so would the typing).
func letPrefix(lets []letBinding, root string) string {
	needed := map[string]bool{root: true}
	var kept []letBinding
	for i := len(lets) - 1; i >= 0; i-- {
		if !needed[lets[i].name] {
			continue
		}
		needed[lets[i].name] = false // an earlier let of that name is shadowed
		kept = append(kept, lets[i])
		v := lets[i].value
		for j := 0; j < len(v); j++ {
			if w := leadingWord(v[j:]); w != "" {
				needed[w] = true
				j += len(w) - 1
			}
		}
	}
	var b strings.Builder
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString("let " + kept[i].name + " = " + kept[i].value + "; ")
	}
	return b.String()
}
