package dsl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"cuelang.org/go/cue"
	"github.com/expr-lang/expr"
	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/schema"
)

var runtimeCompile sync.Mutex

// ${...} in the YAML and JSON files steps read (apply.files, wait.matchFiles and
// wait.absentFiles): when the step starts, every ${expr} of the file's text is replaced by
// the expression's value, then the text is parsed. The expressions read what the scenario's
// own ${...} read (vars, ns, captured values). A value is written as text: a string as it is,
// a number or a boolean as written, a list or a map as JSON (which YAML reads as a flow
// sequence or mapping); so `replicas: ${vars.n}` is a number and `name: "${vars.x}"` a string
// whatever it holds. $${ writes ${; a comment line (# first) is left as written. A file
// without ${ is read as it is. The expressions are
// compiled when the scenario loads (an unknown name is an error at its line and column in the
// file) and judged when the step starts.

// fileExprs finds the ${...} of a file's text: each expression's source and where it starts.
func fileExprs(file string, data []byte, fn func(src string, pos Pos, start, end int) error) error {
	s := string(data)
	line, lineStart := 1, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			line, lineStart = line+1, i+1
		case i == lineStart && strings.HasPrefix(strings.TrimLeft(s[i:], " \t"), "#"):
			// A comment line is left as written.
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j - 1
			} else {
				i = len(s)
			}
		case strings.HasPrefix(s[i:], "$${"):
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			// pos is where compile expects the quote before a CUE string: one column before
			// the expression.
			pos := Pos{File: file, Line: line, Col: i + 2 - lineStart}
			end := matchBrace(s, i+2)
			if end < 0 {
				return &Error{Pos: Pos{File: file, Line: line, Col: i + 1 - lineStart}, Msg: "${ is never closed: expected } after the expression"}
			}
			src := s[i+2 : end]
			if strings.Contains(src, "\n") {
				return &Error{Pos: Pos{File: file, Line: line, Col: i + 1 - lineStart}, Msg: "a ${...} in a file is on one line"}
			}
			if strings.TrimSpace(src) == "" {
				return &Error{Pos: Pos{File: file, Line: line, Col: i + 1 - lineStart}, Msg: "empty ${}: expected an expression such as ${vars.host}"}
			}
			if err := fn(src, pos, i, end+1); err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// stepFiles are the files a step reads whose ${...} are filled, by field.
// StepFiles are the files the step reads when it runs, by the field that names them
// (apply.files, delete.files, wait.matchFiles and absentFiles), as written.
func StepFiles(s *Step) map[string][]string { return stepFiles(s) }

func stepFiles(s *Step) map[string][]string {
	switch p := s.Params.(type) {
	case *schema.Apply:
		return map[string][]string{"files": p.Files}
	case *schema.Delete:
		return map[string][]string{"files": p.Files}
	case *schema.Wait:
		return map[string][]string{"matchFiles": p.MatchFiles, "absentFiles": p.AbsentFiles}
	}
	return nil
}

// readStepFile reads a file a step names, relative to the scenario's directory, once per
// scenario's decoding.
func (d *decoder) readStepFile(f string) ([]byte, string, error) {
	path := f
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.sc.Dir, f)
	}
	if r, ok := d.stepFiles[path]; ok {
		return r.data, path, r.err
	}
	data, err := os.ReadFile(path)
	if d.stepFiles == nil {
		d.stepFiles = map[string]stepFileRead{}
	}
	d.stepFiles[path] = stepFileRead{data, err}
	return data, path, err
}

// stepFileRead is what reading a step's file gave.
type stepFileRead struct {
	data []byte
	err  error
}

// stepFileObjects are the objects of the files a step names that can be read now (a path
// with ${...} cannot; a file that holds them is read as written), for the lints: the run
// checks the rest when it reads them.
func (d *decoder) stepFileObjects(files []string) []schema.FileObject {
	var out []schema.FileObject
	for _, f := range files {
		if strings.Contains(f, "${") {
			continue
		}
		data, _, err := d.readStepFile(f)
		if err != nil {
			continue
		}
		objs, err := YAMLObjects(f, data)
		if err != nil {
			continue
		}
		out = append(out, objs...)
	}
	return out
}

// markFileTemplates marks the steps that read a file holding ${...} (Step.FileTemplates):
// like a step whose own strings interpolate, they are checked when they start.
// A file that cannot be read is an error here, at the step that names it, unless a command
// of the scenario on this machine (process, or exec without a pod) could write it first: the
// run would otherwise find it missing only when the step starts, after everything before it.
func (d *decoder) markFileTemplates() {
	writer := slices.ContainsFunc(d.order, writesLocalFiles)
	for _, s := range d.order {
		for field, files := range stepFiles(s) {
			for i, f := range files {
				data, path, err := d.readStepFile(f)
				if err == nil && bytes.Contains(data, []byte("${")) {
					s.FileTemplates = true
				}
				// A file of no object: a wait over it holds at once (every object of none
				// matches), an apply or a delete does nothing. (A command of the scenario may
				// write the file first: the step errs then, when it reads it.)
				if err == nil && !writer && !strings.Contains(f, "${") {
					if objs, perr := YAMLObjects(f, data); perr == nil && len(objs) == 0 {
						d.l.errs.add(d.kindFieldPos(s, field, i), fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i),
							"%s.%s: %q holds no object (%s): %s", s.Kind, field, f, NoObjectWhy, noObjectConsequence(s.Kind, field))
					} else if perr != nil && !bytes.Contains(data, []byte("${")) {
						// The run refuses it when the step starts (after everything before it):
						// YAML that does not parse, or a document without kind (Chainsaw's
						// check on no resource, copied from its assert file).
						d.l.errs.add(d.kindFieldPos(s, field, i), fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i),
							"%s.%s: %v", s.Kind, field, perr)
					}
				}
				if err != nil {
					d.filesUnknown = true
				}
				if err != nil && !writer && !strings.Contains(f, "${") {
					what := "cannot be read"
					if errors.Is(err, fs.ErrNotExist) {
						what = "does not exist"
					} else if errors.Is(err, syscall.EISDIR) {
						what = "is a directory"
					}
					if matches, ok := globMatches(d.sc.Dir, path); ok && strings.ContainsAny(f, "*?[") && errors.Is(err, fs.ErrNotExist) {
						// Chainsaw's file: "errors/*.yaml" is a glob; here a name, which no
						// file has: say so, and which files the pattern would have named.
						d.l.errs.add(d.kindFieldPos(s, field, i), fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i),
							"%s.%s: %q is a glob pattern, and labrun does not expand one (no file has that name): expected each file named, relative to the scenario's directory%s", s.Kind, field, f, matches)
						continue
					}
					d.l.errs.add(d.kindFieldPos(s, field, i), fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i),
						"%s.%s: %q %s (looked for %s): expected a YAML or JSON file, relative to the scenario's directory", s.Kind, field, f, what, path)
				}
			}
		}
	}
}

// globMatches says, when path (absolute) is a valid glob pattern, which files it names,
// relative to dir, for a message: `, e.g. ["a.yaml", "b.yaml"] (what it matches)`, or that
// it matches none. ok is false when path has no pattern character or is not a valid pattern.
func globMatches(dir, path string) (msg string, ok bool) {
	if !strings.ContainsAny(path, "*?[") {
		return "", false
	}
	m, err := filepath.Glob(path)
	if err != nil {
		return "", false
	}
	if len(m) == 0 {
		return " (it matches no file there either)", true
	}
	var q []string
	for _, p := range m {
		if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
			p = r
		}
		q = append(q, fmt.Sprintf("%q", p))
	}
	return ", e.g. [" + strings.Join(q, ", ") + "] (what it matches)", true
}

// NoObjectWhy says what a file of no object holds.
const NoObjectWhy = "only comments, empty documents or an empty List"

// noObjectConsequence says what a step does with a file of no object.
func noObjectConsequence(kind, field string) string {
	switch {
	case kind == "wait" && field == "absentFiles":
		return "the wait would hold at once, with nothing to be gone; give the objects to wait for"
	case kind == "wait":
		return "the wait would hold at once, every object of none matching; give the objects to wait for"
	}
	return "the step would " + kind + " nothing; give the objects"
}

// writesLocalFiles reports whether s runs a command on this machine, which may write a file a
// later step reads.
func writesLocalFiles(s *Step) bool {
	switch p := s.Params.(type) {
	case *schema.Process:
		return true
	case *schema.Exec:
		return p.Pod == "" && p.Selector == ""
	}
	return false
}

// checkFileTemplates compiles the ${...} of the files a step reads, when they can be read
// before the run (a file an earlier step writes is checked when it is read).
func (d *decoder) checkFileTemplates(s *Step, names *Names) {
	for field, files := range stepFiles(s) {
		d.checkFiles(s, field, files, names)
	}
}

func (d *decoder) checkFiles(s *Step, field string, files []string, names *Names) {
	for i, f := range files {
		data, path, err := d.readStepFile(f)
		if err != nil || !bytes.Contains(data, []byte("${")) {
			continue
		}
		err = fileExprs(path, data, func(src string, pos Pos, _, _ int) error {
			e, cerr := compile(src, pos, names, compileOpts{})
			if cerr != nil {
				return cerr
			}
			if d.fileExprs == nil {
				d.fileExprs = map[*Step][]*Expr{}
			}
			d.fileExprs[s] = append(d.fileExprs[s], e)
			// Filled when the step starts, as its own strings are: a read of a step that has
			// not run (or ended) then is refused as it is there, at its place in the file
			// (outcome.x would be written "pending", x.stdout would have no value).
			d.checkReads(s, e, fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i))
			return nil
		})
		if err != nil {
			e, ok := err.(*Error)
			if !ok {
				e = &Error{Pos: d.fieldPos(s, fmt.Sprintf("%s.%d", field, i)), Msg: err.Error()}
			}
			e.Path = fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i)
			d.l.errs.errs = append(d.l.errs.errs, e)
		}
	}
}

// ExpandFile returns data, the text of file (a file a step of the scenario reads), with every
// ${expr} replaced by its value in env (see above); data itself when it holds none.
func (sc *Scenario) ExpandFile(file string, data []byte, env map[string]any) ([]byte, error) {
	if !bytes.Contains(data, []byte("${")) {
		return data, nil
	}
	// A run's expressions are compiled at load; these now, against the same names, whose
	// cache the runs of a parallel suite share.
	runtimeCompile.Lock()
	defer runtimeCompile.Unlock()
	var out bytes.Buffer
	last := 0
	err := fileExprs(file, data, func(src string, pos Pos, start, end int) error {
		e, cerr := compile(src, pos, sc.exprNames, compileOpts{})
		if cerr != nil {
			return cerr
		}
		v, err := expr.Run(e.Program, env)
		if err != nil {
			return fmt.Errorf("%s: ${%s}: %w", e.Pos, src, err)
		}
		text, err := filled(e.Pos, src, v)
		if err != nil {
			return err
		}
		out.Write(bytes.ReplaceAll(data[last:start], []byte("$${"), []byte("${")))
		out.WriteString(text)
		last = end
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Write(bytes.ReplaceAll(data[last:], []byte("$${"), []byte("${")))
	return out.Bytes(), nil
}

// YAMLObjects splits a YAML (or JSON) stream into its objects, each named by the line its
// document starts on; a List's items are objects of their own.
func YAMLObjects(name string, data []byte) ([]schema.FileObject, error) {
	var out []schema.FileObject
	lines := strings.SplitAfter(string(data), "\n")
	start := 0
	flush := func(end int) error {
		doc := strings.Join(lines[start:end], "")
		at := start + 1
		for i := start; i < end && strings.TrimSpace(lines[i]) == ""; i++ {
			at = i + 2
		}
		if strings.TrimSpace(doc) == "" {
			return nil
		}
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return fmt.Errorf("%s, line %d: %w", name, at, err)
		}
		if o == nil {
			return nil
		}
		src := fmt.Sprintf("%s, line %d", name, at)
		if items, ok := o["items"].([]any); ok && strings.HasSuffix(fmt.Sprint(o["kind"]), "List") {
			for i, it := range items {
				m, ok := it.(map[string]any)
				if !ok {
					return fmt.Errorf("%s, item %d: expected an object", src, i+1)
				}
				out = append(out, schema.FileObject{Object: m, Source: fmt.Sprintf("%s, item %d", src, i+1), Line: at})
			}
			return nil
		}
		if k, _ := o["kind"].(string); k == "" {
			return fmt.Errorf("%s: the object needs a kind", src)
		}
		out = append(out, schema.FileObject{Object: o, Source: src, Line: at})
		return nil
	}
	for i, l := range lines {
		if docSeparator.MatchString(strings.TrimRight(l, "\r\n")) {
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if err := flush(len(lines)); err != nil {
		return nil, err
	}
	return out, nil
}

var docSeparator = regexp.MustCompile(`^---\s*$`)

// kindFieldPos is the position of item i of the step's kind field (apply.files[i]), or the
// nearest one known.
func (d *decoder) kindFieldPos(s *Step, field string, i int) Pos {
	if kv, ok := d.kindValue[s]; ok {
		if v := kv.LookupPath(cue.MakePath(cue.Str(field), cue.Index(i))); v.Exists() {
			if p := d.l.valuePos(v); p.IsValid() {
				return p
			}
		}
	}
	return d.fieldPos(s, field)
}
