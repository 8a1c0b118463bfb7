package dsl

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Pos is a position in a user's file: a .cue file, or a .md file whose fenced blocks hold CUE.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// lit is the string literal written at Pos when it holds escapes (\", \u…), and litOff a
	// byte offset into its value (shift): inString places that byte where it is written, the
	// escapes counted as written. Neither is printed nor compared by callers.
	lit    string
	litOff int
}

// shift moves p, the position of a string literal's opening quote, off bytes further into the
// string's value.
func (p Pos) shift(off int) Pos {
	if p.lit == "" {
		p.Col += off
	} else {
		p.litOff += off
	}
	return p
}

// inString is the position of the byte of the string's value that p (a literal's opening
// quote, shifted) names: one column past the quote, plus what the escapes before it take.
func (p Pos) inString() Pos {
	if p.lit == "" {
		p.Col++
		return p
	}
	if dLine, c, ok := literalPlace(p.lit, p.litOff); ok && dLine > 0 {
		p.Line, p.Col = p.Line+dLine, c
	} else if ok {
		p.Col += c
	} else {
		p.Col += 1 + p.litOff
	}
	p.lit, p.litOff = "", 0
	return p
}

// IsValid reports whether the position names a file.
func (p Pos) IsValid() bool { return p.File != "" }

// String prints file:line:col.
func (p Pos) String() string {
	if !p.IsValid() {
		return "-"
	}
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Rel returns p with its file name relative to dir when that is shorter.
func (p Pos) Rel(dir string) Pos {
	if dir == "" || !filepath.IsAbs(p.File) {
		return p
	}
	if r, err := filepath.Rel(dir, p.File); err == nil && !strings.HasPrefix(r, "..") {
		p.File = r
	}
	return p
}

// Same reports whether p and q name one place (file, line and column).
func (p Pos) Same(q Pos) bool { return p.File == q.File && p.Line == q.Line && p.Col == q.Col }

// Less orders positions by file, then line, then column.
func (p Pos) Less(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Error is one problem in a scenario, at the user's position.
type Error struct {
	Pos Pos `json:"pos"`
	// Path is the CUE path of the offending value, e.g. "s2.steps.3.load.connections".
	Path string `json:"path,omitempty"`
	Msg  string `json:"message"`
	// Also are other places the problem involves (the other of two conflicting values).
	Also []Pos `json:"also,omitempty"`
	// Warning is the lint code of a warning that --strict made an error ("" otherwise).
	Warning string `json:"warning,omitempty"`
}

// OnlyWarnings reports whether every problem of es is a warning --strict made an error: the
// checks that follow a load (a sweep's combinations) still have something to say.
func (es Errors) OnlyWarnings() bool {
	for _, e := range es {
		if e.Warning == "" {
			return false
		}
	}
	return len(es) > 0
}

func (e *Error) Error() string {
	msg := e.Msg
	if len(e.Also) > 0 {
		var ps []string
		for _, p := range e.Also {
			ps = append(ps, p.String())
		}
		msg += " (also at " + strings.Join(ps, ", ") + ")"
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", e.Pos, e.Path, msg)
	}
	return fmt.Sprintf("%s: %s", e.Pos, msg)
}

// Errors is every problem found while loading, sorted by position.
type Errors []*Error

func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Rel makes every position relative to dir.
func (es Errors) Rel(dir string) Errors {
	out := make(Errors, len(es))
	for i, e := range es {
		c := *e
		c.Pos = c.Pos.Rel(dir)
		c.Also = nil
		for _, p := range e.Also {
			c.Also = append(c.Also, p.Rel(dir))
		}
		out[i] = &c
	}
	return out
}

// errorList collects problems; duplicates (same position and message) are dropped.
type errorList struct {
	errs Errors
	seen map[string]bool
}

func (l *errorList) add(pos Pos, path, format string, args ...any) {
	l.addAlso(pos, path, nil, format, args...)
}

func (l *errorList) addAlso(pos Pos, path string, also []Pos, format string, args ...any) {
	e := &Error{Pos: pos, Path: path, Msg: fmt.Sprintf(format, args...), Also: also}
	key := e.Error()
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.errs = append(l.errs, e)
}

func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	// Once each: errors appended without add (a compile error, a vacuity finding) come twice
	// from a file loaded twice (named and through its folder).
	l.errs = onceBy(l.errs, func(e *Error) string { return e.Path + "\x00" + e.Error() })
	l.errs = withoutFollowOns(l.errs)
	l.errs.Sort()
	return l.errs
}

// Sort orders es by position, then message, as a load says them.
func (es Errors) Sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if !a.Pos.Same(b.Pos) {
			return a.Pos.Less(b.Pos)
		}
		return a.Msg < b.Msg
	})
}

// stepNamePath is the path of a step's name (of steps, setup or cleanup, in a block or not);
// its first group is the scenario's path.
var stepNamePath = regexp.MustCompile(`^(.+?)\.(?:steps|setup|cleanup)\.\d+(?:\..+)?\.name$`)

// stepListPath is the path of a phase's list of steps or of one step; its first group is the
// scenario's path.
var stepListPath = regexp.MustCompile(`^(.+?)\.(?:steps|setup|cleanup|catch)(?:\.\d+)?$`)

// withoutFollowOns drops the problems that are consequences of another one, which alone says
// what to fix: below a value that is no struct or list (load: null), its fields' problems
// ("url is empty"); and, once a step's name is refused (name: 7, "be fore"), an expectation's
// complaint about the names and snapshots it finds, which that step would have given ("delta
// needs two snapshots ... 1 named snapshot", "unknown name before"). Before, vet listed them
// beside the root problem, each asking for a fix of its own.
func withoutFollowOns(es Errors) Errors {
	var notStruct []string
	badName := map[string]bool{} // scenario paths
	var causes []Pos             // where a problem other than a builtin's failed call is
	for _, e := range es {
		if !strings.HasPrefix(e.Msg, callFailed) {
			causes = append(causes, e.Pos)
		}
	}
	for _, e := range es {
		if e.Path == "" {
			continue
		}
		if strings.HasPrefix(e.Msg, "expected a struct, got ") || strings.HasPrefix(e.Msg, "expected a list, got ") {
			notStruct = append(notStruct, e.Path+".")
			if m := stepListPath.FindStringSubmatch(e.Path); m != nil {
				badName[m[1]] = true // steps: null, [null]: no step of it has a name
			}
		}
		if m := stepNamePath.FindStringSubmatch(e.Path); m != nil {
			badName[m[1]] = true
		}
	}
	// A value CUE cannot make concrete because what it reads is an error of its own
	// (requests: vars.req, no var req): the error of the read says it, and "cannot convert
	// non-concrete value vars.req" at the same field is that one mistake again.
	explained := map[string]bool{}
	for _, e := range es {
		if e.Path != "" && !strings.HasPrefix(e.Msg, nonConcrete) {
			explained[e.Path] = true
		}
	}
	out := es[:0:0]
	for _, e := range es {
		if followsOn(e, notStruct, badName) || callFollowsOn(e, causes) {
			continue
		}
		if strings.HasPrefix(e.Msg, nonConcrete) && explained[e.Path] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// nonConcrete is how CUE says that a value still reads something that has none.
const nonConcrete = "cannot convert non-concrete value "

// callFailed is how CUE says that a builtin's argument holds an error: list.Concat([a, b])
// where a reaches a kit whose template has a wrong field.
const callFailed = "error in call to "

// callCause is a builtin's failed call (msg: "error in call to list.Concat") with the cause
// CUE's full text holds after it (full: e.Error()), said in the user's terms. Before, the
// message was the first part alone: list.Concat over a kit that gives a struct (kit.#Load &
// {...} where its .steps was meant) said "error in call to list.Concat" and not why.
func callCause(msg, full string) string {
	i := strings.Index(full, msg+": ")
	if i < 0 {
		return msg
	}
	cause := strings.TrimSpace(full[i+len(msg)+2:])
	if m := notListRE.FindStringSubmatch(cause); m != nil {
		what := "a " + m[1]
		switch m[1] {
		case "int":
			what = "an int"
		case "struct":
			what = "a struct (a kit's template or a step, where one of its lists was meant: (kit.#T & {...}).steps)"
		}
		return fmt.Sprintf("%s: one of the lists it joins is %s, not a list: expected a list of lists, e.g. list.Concat([a.steps, [{sleep: \"1s\"}]]); put a single value in brackets, [x]", msg, what)
	}
	if len(cause) > 200 {
		cause = cause[:200] + "…"
	}
	return msg + ": " + cause
}

// notListRE is CUE's cause of a builtin's failed call on a value that is not a list.
var notListRE = regexp.MustCompile(`^cannot use value .* \(type (\w+)\) as list$`)

// callFollowsOn tells a builtin's failed call that CUE places at another problem's position:
// one wrong field in a kit template made every list.Concat over the kit's lists say "error in
// call to list.Concat" there, five messages naming unrelated expect lists beside the one that
// says what to fix. A failed call alone at its position is kept: it is all there is to say.
func callFollowsOn(e *Error, causes []Pos) bool {
	if !strings.HasPrefix(e.Msg, callFailed) {
		return false
	}
	for _, p := range causes {
		if p.Same(e.Pos) {
			return true
		}
	}
	return false
}

func followsOn(e *Error, notStruct []string, badName map[string]bool) bool {
	for _, p := range notStruct {
		if strings.HasPrefix(e.Path, p) {
			return true
		}
	}
	sc, _, ok := strings.Cut(e.Path, ".expect.")
	if !ok || !badName[sc] {
		return false
	}
	return strings.Contains(e.Msg, ": delta needs two snapshots") || strings.Contains(e.Msg, ": unknown name ")
}
