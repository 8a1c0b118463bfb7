package dsl

import (
	"fmt"

	"labrun.dev/labrun/schema"
)

// CompileValue compiles src, a number read from the scenario's run by something outside the
// scenario (a tolerance line "~ EXPR VALUE ±N%" of a Markdown document's expected block),
// against the names the scenario's expectations see and with the same typing: an alias such
// as <load>.code503 is rewritten as an expectation's is, and a name, stat or key the run can
// never hold is refused as it is in expect. pos is the position of the byte before src (an
// expectation's pos is its opening quote): errors are at src's own columns. The expression
// must read the run (a step's result, a snapshot, delta or a time) and be a number.
func (sc *Scenario) CompileValue(src string, pos Pos) (*Expr, error) {
	if sc.exprNames == nil {
		return nil, &Error{Pos: pos.inString(), Msg: fmt.Sprintf("in expression %q: scenario %s has no compiled names", src, sc.Name)}
	}
	// As in ExpandFile: the names' cache is shared by the runs of a parallel suite.
	runtimeCompile.Lock()
	defer runtimeCompile.Unlock()
	e, cerr := compile(src, pos, sc.exprNames, compileOpts{})
	if cerr != nil {
		return nil, cerr
	}
	if !e.readsTheRun() {
		return nil, &Error{Pos: pos.inString(), Msg: fmt.Sprintf("in expression %q: it reads nothing the run records: it has the same value on every run, so it checks nothing; expected one that reads a step's result, a snapshot, delta or a time", src)}
	}
	if !e.readsRecorded() {
		return nil, &Error{Pos: pos.inString(), Msg: fmt.Sprintf("in expression %q: it reads only the clock (now()) and constants, nothing the run recorded: its value depends on when it is read, whatever the run did, so it checks nothing of the run; expected one that reads a step's result, a snapshot, delta or a time", src)}
	}
	if t := e.Type; known(t) && t.Kind != schema.TNumber {
		return nil, &Error{Pos: pos.inString(), Msg: fmt.Sprintf("in expression %q: it is %s, not a number", src, describe(t))}
	}
	return e, nil
}
