package interp

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"strings"
	"sync"

	"labrun.dev/labrun/dsl"
)

// Redactor hides the values of a scenario's secret vars (its secrets field): each becomes
// "[secret <name>]", as written and as JSON and HTML escape it. A nil Redactor hides nothing.
type Redactor struct {
	r *strings.Replacer
	// forms are the texts hidden (the values and their escaped forms), to hold back a
	// stream's end that may be the start of one.
	forms []string
}

// NewRedactor returns the Redactor of sc's secret vars (nil when it declares none).
func NewRedactor(sc *dsl.Scenario) *Redactor {
	var pairs, forms []string
	for _, name := range sc.Secrets {
		v, ok := sc.Vars[name].(string)
		if !ok || v == "" {
			continue
		}
		mask := "[secret " + name + "]"
		b, _ := json.Marshal(v)
		for _, f := range []string{v, string(b[1 : len(b)-1]), html.EscapeString(v)} {
			if f != "" && !containsString(forms, f) {
				forms = append(forms, f)
				pairs = append(pairs, f, mask)
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return &Redactor{r: strings.NewReplacer(pairs...), forms: forms}
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
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
