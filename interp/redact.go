package interp

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/secretmask"
)

// Redactor hides the values of a scenario's secret vars (its secrets field): each becomes
// "[secret <name>]", as written and as JSON and HTML escape it; a value that a matrix sweeps
// becomes "[secret <name> #<i>]", i counting the sweep's values from 1, so that the runs of a
// sweep stay apart without showing what they ran with. A nil Redactor hides nothing.
type Redactor struct {
	r *strings.Replacer
	// masks are the values hidden, each with its mask (to join Redactors).
	masks [][2]string
	// forms are the texts hidden (the values and their escaped forms), to hold back a
	// stream's end that may be the start of one.
	forms []string
}

// NewRedactor returns the Redactor of sc's secret vars (nil when it declares none): their
// values in sc and every value its matrix sweeps (sc.SecretSweep).
func NewRedactor(sc *dsl.Scenario) *Redactor {
	return newRedactor(secretmask.Masks(sc.Secrets, sc.Vars, sc.SecretSweep))
}

// SourceRedactor returns the Redactor of the values of sc's secret vars that its source holds:
// the values it declares (sc loaded with its own vars) and those its own sweep declares, each
// masked as the record of a run of that sweep writes it. replay, merge and mutate load a
// scenario with the vars a record keeps, where a secret's value is its redaction: a value the
// source writes out itself (an expectation that holds the secret, inlined by interpolation or
// written as it is) shows as it is, unless hidden so.
func SourceRedactor(sc *dsl.Scenario) *Redactor {
	sweep := map[string][]string{}
	for _, name := range sc.Secrets {
		if vs := sc.Sweep[name]; len(vs) > 0 {
			sweep[name] = vs
		}
	}
	return newRedactor(secretmask.Masks(sc.Secrets, sc.Vars, sweep))
}

// MatrixRedactor returns the Redactor of sc's secret vars at every value m sweeps: what a
// matrix prints and its summary show the masks its runs' records show.
func MatrixRedactor(m *dsl.Matrix, sc *dsl.Scenario) *Redactor {
	return newRedactor(secretmask.Masks(sc.Secrets, sc.Vars, SecretSweep(m, sc)))
}

// SecretSweep is the values m sweeps of each of sc's secret vars.
func SecretSweep(m *dsl.Matrix, sc *dsl.Scenario) map[string][]string {
	var out map[string][]string
	for _, v := range m.Sweep {
		if slices.Contains(sc.Secrets, v.Name) {
			if out == nil {
				out = map[string][]string{}
			}
			out[v.Name] = v.Values
		}
	}
	return out
}

// JoinRedactors hides what any of rs hides.
func JoinRedactors(rs ...*Redactor) *Redactor {
	var masks [][2]string
	for _, r := range rs {
		if r != nil {
			masks = append(masks, r.masks...)
		}
	}
	return newRedactor(masks)
}

func newRedactor(masks [][2]string) *Redactor {
	type pair struct{ form, mask string }
	var pairs []pair
	seen := map[string]bool{}
	for _, m := range masks {
		b, _ := json.Marshal(m[0])
		for _, f := range []string{m[0], string(b[1 : len(b)-1]), html.EscapeString(m[0])} {
			if f != "" && !seen[f] {
				seen[f] = true
				pairs = append(pairs, pair{f, m[1]})
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// The replacer tries its strings in order at each position: the longest first, so that a
	// value that starts another is not hidden inside it with the wrong mask.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].form) > len(pairs[j].form) })
	r := &Redactor{masks: masks}
	var args []string
	for _, p := range pairs {
		args = append(args, p.form, p.mask)
		r.forms = append(r.forms, p.form)
	}
	r.r = strings.NewReplacer(args...)
	return r
}

// JSON sets out to in with the secrets hidden: in marshalled to JSON and back into out (a
// fresh value, so that nothing in shares with out is changed).
func (r *Redactor) JSON(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if r != nil {
		b = []byte(r.r.Replace(string(b)))
	}
	return json.Unmarshal(b, out)
}

// String hides the secrets in s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Record hides the secrets everywhere in rec (its JSON form, and the artifacts' data) and
// returns the result: what expressions saw was judged before. Streamed artifacts are hidden as
// they are written (Writer).
func (r *Redactor) Record(rec *Record) *Record {
	if r == nil {
		return rec
	}
	arts := rec.Artifacts
	shallow := *rec
	shallow.Artifacts = nil
	b, err := json.Marshal(&shallow)
	if IsNonFinite(err) {
		b, err = json.Marshal(shallow.WithFiniteJSON())
	}
	if err != nil {
		return rec
	}
	var out Record
	if err := json.Unmarshal([]byte(r.r.Replace(string(b))), &out); err != nil {
		return rec
	}
	for _, a := range arts {
		if a.Data != nil {
			a.Data = []byte(r.r.Replace(string(a.Data)))
		}
		a.Step, a.Name = r.r.Replace(a.Step), r.r.Replace(a.Name)
	}
	out.Artifacts = arts
	return &out
}

// Writer returns a writer that hides the secrets in what passes through to w; it holds back
// the end of what was written while it may be the start of a secret, until the next Write or
// Close (which does not close w).
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	return &redactingWriter{r: r, w: w}
}

type redactingWriter struct {
	r       *Redactor
	w       io.Writer
	mu      sync.Mutex
	pending []byte
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	if rw.r == nil {
		return rw.w.Write(p)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	buf := append(rw.pending, p...)
	cut := rw.r.safeEnd(buf)
	out := rw.r.r.Replace(string(buf[:cut]))
	rw.pending = append(rw.pending[:0:0], buf[cut:]...)
	if _, err := io.WriteString(rw.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what was held back.
func (rw *redactingWriter) Close() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(rw.w, rw.r.r.Replace(string(rw.pending)))
	rw.pending = nil
	return err
}

// safeEnd is how much of b can be hidden and passed on now: all but its longest end that is
// the start (not the whole) of a hidden form, which what comes next may complete, and never
// a cut inside a whole form.
func (r *Redactor) safeEnd(b []byte) int {
	hold := 0
	for _, f := range r.forms {
		for n := min(len(f)-1, len(b)); n > hold; n-- {
			if bytes.HasSuffix(b, []byte(f[:n])) {
				hold = n
				break
			}
		}
	}
	cut := len(b) - hold
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range r.forms {
			from := max(0, cut-len(f)+1)
			if i := bytes.Index(b[from:min(len(b), cut+len(f)-1)], []byte(f)); i >= 0 && from+i < cut {
				cut, moved = from+i, true
			}
		}
	}
	return cut
}
