package dsl

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"labrun.dev/labrun/schema"
)

// The objects of a wait's matchFiles and absentFiles (Chainsaw's and KUTTL's assert and errors
// files) are partial objects as a match's and an absent's are, and a misspelled field is as
// wrong in them: an errors file asking spec.replica (for replicas) matches no object, so the
// absence holds at once over a Deployment that is there; a Chainsaw expression key copied as
// is ((replicas > `1`), ~.(containers)) is a field no object has, and holds the same way. So
// vet checks each object of a file it can read (no ${...} in its name or text: the run checks
// those, see interp's ReadObjects) against its kind's fields, as it checks match and absent
// (schema.PartialMisses), and places the error at the field in the file.

// checkFilePartials refuses a field of a wait's matchFiles or absentFiles object that its
// built-in kind does not have, and a field of an apply's files' object that its built-in or
// Istio kind refuses (schema.ObjectProblems).
//
// A delete's files' objects are held to their kind and apiVersion as its objects written in
// CUE are (schema.ObjectKindProblem).
//
// Every file a step reads (apply, delete, wait) is also refused an object of KUTTL's own kinds
// (TestStep, TestAssert: a test's settings, which the API server serves no kind for) or of
// Chainsaw's (Test, Configuration, StepTemplate), and a
// metadata.namespace that is another tool's template left as written (schema.NamespaceTemplate).
func (d *decoder) checkFilePartials() {
	for _, s := range d.order {
		w, wait := s.Params.(*schema.Wait)
		for field, files := range stepFiles(s) {
			for i, f := range files {
				if strings.Contains(f, "${") {
					continue
				}
				data, path, err := d.readStepFile(f)
				if err != nil || bytes.Contains(data, []byte("${")) {
					continue // the run checks it when it reads it
				}
				objs, err := YAMLObjects(f, data)
				if err != nil {
					continue
				}
				lines := strings.SplitAfter(string(data), "\n")
				for _, o := range objs {
					errPath := fmt.Sprintf("%s.%s.%s.%s.%d", d.sc.Name, s.Path, s.Kind, field, i)
					at := func(fpath []string, format string, args ...any) {
						line, col := yamlKeyPos(lines, o.Line, fpath)
						d.l.errs.add(Pos{File: path, Line: line, Col: col}, errPath,
							"%s.%s (%s): %s", s.Kind, field, o.Source, fmt.Sprintf(format, args...))
					}
					// leave keeps a problem of an Istio kind for the cluster's CRD to judge,
					// where the load leaves them to it (Options.IstioByCluster); false when
					// it is said now.
					leave := func(fpath []string, ic *schema.IstioCheck, msg string) bool {
						if ic == nil || !d.judgedByCluster() {
							return false
						}
						line, col := yamlKeyPos(lines, o.Line, fpath)
						c := *ic
						prefix := fmt.Sprintf("%s.%s (%s): ", s.Kind, field, o.Source)
						c.Msg = prefix + msg
						if ic.Path != nil {
							prefix += strings.Join(fpath, ".") + ": "
						}
						d.sc.IstioChecks = append(d.sc.IstioChecks, &IstioCheck{IstioCheck: c, Pos: Pos{File: path, Line: line, Col: col}, Field: errPath, Step: s, Prefix: prefix})
						return true
					}
					apiVersion, _ := o.Object["apiVersion"].(string)
					if kind, _ := o.Object["kind"].(string); strings.HasPrefix(apiVersion, "kuttl.dev/") {
						at([]string{"kind"}, "%s is KUTTL's own, a test's settings and no object of the cluster: drop it from the file%s", kind, kuttlFields[kind])
						continue
					}
					if kind, _ := o.Object["kind"].(string); strings.HasPrefix(apiVersion, "chainsaw.kyverno.io/") {
						at([]string{"kind"}, "%s is Chainsaw's own (a test, its configuration or a step template), no object of the cluster: write its steps as the scenario's (see Coming from Chainsaw/KUTTL in docs/language.md)", kind)
						continue
					}

					md, _ := o.Object["metadata"].(map[string]any)
					if ns, _ := md["namespace"].(string); schema.NamespaceTemplate(ns) != "" {
						at([]string{"metadata", "namespace"}, "%s", schema.NamespaceTemplate(ns))
						continue
					}
					if _, apply := s.Params.(*schema.Apply); apply {
						schema.ChainsawTemplates(o.Object, func(fpath []string, msg string) {
							at(fpath, "%s: %s", strings.Join(fpath, "."), msg)
						})
					}
					if _, apply := s.Params.(*schema.Apply); apply && !s.ExpectFail {
						// The run refuses an object without a name before its first step;
						// generateName (the API server's choice of name) is not supported.
						if name, _ := md["name"].(string); name == "" {
							hint := ""
							if gn, _ := md["generateName"].(string); gn != "" {
								hint = " (" + schema.GenerateNameHint + ")"
							}
							at([]string{"metadata", "name"}, "missing metadata.name%s", hint)
						}
						// As an apply's objects written in CUE (schema.ObjectProblems).
						schema.ObjectProblems(o.Object, true, func(fpath []string, msg string, _ bool, ic *schema.IstioCheck) {
							msg = strings.Join(fpath, ".") + ": " + msg
							if !leave(fpath, ic, msg) {
								at(fpath, "%s", msg)
							}
						})
					}
					if _, del := s.Params.(*schema.Delete); del && !s.ExpectFail {
						// As a delete's objects written in CUE (schema.ObjectKindProblem):
						// looked up as written, a kind the cluster does not serve deletes
						// nothing.
						if k, ok := o.Object["kind"].(string); ok && !strings.ContainsAny(k, " /.") {
							if f, msg, istio := schema.ObjectKindProblem(o.Object); msg != "" {
								msg = fmt.Sprintf("%s: %s; a delete of it deletes nothing: the step fails, or passes with ignoreNotFound", f, msg)
								var ic *schema.IstioCheck
								if istio {
									ic = &schema.IstioCheck{Kind: k, APIVersion: apiVersion}
								}
								if !leave([]string{f}, ic, msg) {
									at([]string{f}, "%s", msg)
								}
							}
						}
					}
					if !wait {
						continue
					}
					schema.PartialMisses(o.Object, func(fpath []string, msg string, ic *schema.IstioCheck) {
						msg = strings.Join(fpath, ".") + ": " + msg
						if !leave(fpath, ic, msg) {
							at(fpath, "%s", msg)
						}
					})
					if w.AnyOrder {
						schema.EmptyLists(o.Object, func(fpath []string) {
							at(fpath, "%s: %s", strings.Join(fpath, "."), schema.EmptyAnyOrderList)
						})
					}
				}
			}
		}
	}
}

// yamlKeyPos finds where the field at path is written in a YAML document that begins on line
// start (1-based) of lines, in block style: each key on a line of its own, deeper than its
// parent's, a list's elements "- " items. It returns the line and column of the deepest key
// of path it finds (the document's first line when it finds none): near enough to point at
// the field, as a flow-style or JSON document is placed at its first line.
func yamlKeyPos(lines []string, start int, path []string) (int, int) {
	line, col := start, 1
	from, indent := start-1, -1 // search from this line index, for keys deeper than indent
	for _, key := range path {
		if _, err := strconv.Atoi(key); err == nil {
			// A list index: its elements are "- " items below the key found last; the key
			// below it is looked for from there (the first element's, near enough).
			continue
		}
		found := false
		for i := from; i < len(lines); i++ {
			l := strings.TrimRight(lines[i], "\r\n")
			t := strings.TrimLeft(l, " ")
			if t == "---" || t == "..." {
				break // the document ends
			}
			ind := len(l) - len(t)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if ind <= indent && !strings.HasPrefix(t, "- ") {
				break // out of the parent
			}
			for strings.HasPrefix(t, "- ") {
				t = strings.TrimLeft(t[2:], " ")
				ind = len(l) - len(t)
			}
			for _, w := range []string{key, strconv.Quote(key), "'" + key + "'"} {
				if strings.HasPrefix(t, w+":") {
					line, col, from, indent, found = i+1, ind+1, i+1, ind, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			break
		}
	}
	return line, col
}

// kuttlFields says, for each of KUTTL's own kinds (KUTTL v0.26.0-16-gd691781's
// pkg/apis/testharness/v1beta1), what its fields become in a scenario: each kind has its own
// fields (a TestStep has no timeout, a TestFile only a testRunSelector).
var kuttlFields = map[string]string{
	"TestStep":   " (its apply, assert and error lists are apply.files, wait.matchFiles and wait.absentFiles; its delete, a delete step; its commands, exec steps)",
	"TestAssert": " (its timeout is the step's timeout; its commands, exec steps, in a repeat until they pass to try them again as KUTTL does; its collectors, catch steps; its resourceRefs with assertAll or assertAny, a get with until)",
	"TestFile":   " (its testRunSelector says which runs the file is for: a ${vars.…} in the step's file path picks the file per run, e.g. 01-create-${vars.flavor}.yaml with --var flavor=a)",
	"TestSuite":  " (its settings are labrun run's flags and setup steps: see Coming from Chainsaw/KUTTL in docs/language.md)",
}
