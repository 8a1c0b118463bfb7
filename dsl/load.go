package dsl

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/parser"

	"labrun.dev/labrun/schema"
)

// Options configure loading.
type Options struct {
	// Vars override scenario vars by name (from --var name=value); the value is converted to
	// the type the scenario declares.
	Vars map[string]string
	// GivenVars are the names of Vars that the command line's --var gave (not a sweep's
	// values, not a record's vars replayed): one the scenario declares and nothing in it
	// reads is refused, as the run would be the one without it.
	GivenVars map[string]bool
	// Sweeps are the values the sweep being loaded gives each var it names, in order, where
	// they replace the scenario's own (--sweep): a secret var's value is hidden in problems
	// as the i-th of them, "[secret NAME #i]", as its runs show it (secretmask).
	Sweeps map[string][]string
	// SweepFrom says who gave each of Sweeps ("scenario" or "--sweep", as SweepVar.From): what
	// a problem of one of its values names.
	SweepFrom map[string]string
	// Overlay adds or replaces files by absolute path (tests, stdin).
	Overlay map[string][]byte
	// Strict makes every lint warning an error.
	Strict bool
	// Target is the target the scenarios will run on (--target); empty means each scenario's
	// own. The checks that depend on the target (what it can run) use it.
	Target string
	// Selected, when set, says which scenarios will run (--scenario, --tag): Target applies
	// to those only, and the others are checked against their own target, so that selecting
	// some scenarios of a folder with --target does not fail on the ones left out.
	Selected func(name string, tags []string) bool
	// Budget bounds the evaluation (zero: no bound).
	Budget Budget
	// AllowSystemNamespaces is the command line's --allow-system-namespaces: a scenario may
	// change the system namespaces it opts in to (systemNamespaces) only with it.
	AllowSystemNamespaces bool
	// Combinations, set for the loads of a sweep's combinations (a file loaded again with
	// other vars after a load without them found no problem), lets them share their parsing,
	// their CUE context, and build only the files a combination can change (see
	// Combinations).
	Combinations *Combinations
	// KeepSyntax keeps each CUE package's parsed files in the Result, for the loads of its
	// sweeps' combinations (Combinations.Reuse), which would parse them again otherwise.
	KeepSyntax bool
	// Partial keeps the scenarios that have problems too, decoded as far as they go, in
	// Result.Partial: an editor completes and explains a scenario being written with their
	// names. It changes no check.
	Partial bool
	// ForRun says the load is for a run, whose scenarios outlive it and whose peak memory is
	// the run's too. Each step then keeps where its fields are written as a table
	// (Step.FieldPos) rather than a lookup in the CUE evaluation, which is garbage once the
	// load ends, and lets go of its parameters' decoded form unless it holds ${...}
	// (dropRaw); and a package's steps are checked against the schema one at a time
	// (cleanShallow), so that the load never holds every step under the schema at once. It
	// costs CPU (about twice the evaluation's for a long list of steps) that vet, whose
	// scenarios end with the load, does not pay; the problems found are the same.
	ForRun bool
	// IstioByCluster, set by vet --server (a run's load, ForRun, does the same), leaves what
	// vet finds wrong in an Istio kind's object, kind or version by the Istio release it knows
	// (kubeshape.IstioAPIVersion), which a newer Istio may serve, to the cluster's CRDs: kept
	// in Scenario.IstioChecks rather than said, for interp.JudgeIstio to judge; and an Istio
	// kind's fields read by a wait's match, a get's path or an expression go unchecked here,
	// where the cluster's CRD checks them (interp).
	IstioByCluster bool
	// ClusterRules are the DestinationRules a cluster holds already, by scenario name (vet
	// --server reads them in the namespaces a rule for the scenario's routes is looked up
	// in): unknown-subset counts their subsets beside the scenario's own, and judges a host
	// only they, or none, define rules for. A scenario not in the map is judged as without.
	ClusterRules map[string][]map[string]any

	// DiscardedBuild, when not nil, is called before a build whose value is let go as soon as
	// it is checked, and what it returns after (the loader then collects, when the heap is
	// large): the CLI raises the collector's target there (gcfloor.Boost), so that no cycle
	// marks a build about to die.
	DiscardedBuild func() (end func())

	// DropEvaluation lets each build's evaluation go once the next one starts and the last
	// one's when the load ends, as a run's load does (ForRun), but without the tables that
	// take its place there: each step's FieldPos is then the step's own position. vet sets it when nothing after its loads asks
	// where a step's fields are written (without --server): kept, the evaluation of the last
	// package loaded stayed live through the checks after the load and the sweeps'
	// combinations, and every collection there marked it (the repository: 27 MB live before
	// the combinations, 13 MB without it).
	DropEvaluation bool

	// fullCheck turns cleanByKind off, for the tests that hold its verdict to the full
	// build's.
	fullCheck bool
}

// Result is what Load returns: every scenario found, in path order then declaration order.
type Result struct {
	Scenarios []*Scenario
	// Warnings are the lints' findings on the valid scenarios (see lint.go).
	Warnings []*Warning
	// Files are the user files read (for the vet summary).
	Files []string
	// Skipped are the files named *.cue left out of loading, each with why: not regular files,
	// unreadable, or of another package than a named file's and with a syntax error (at its
	// position). Loading goes on without them.
	Skipped Errors
	// Partial are the scenarios that have problems, decoded as far as they went (steps,
	// names, the timeline), when Options.Partial asks for them; never run one.
	Partial []*Scenario
	// shallowClean counts the packages a run's load found clean step by step (cleanShallow).
	shallowClean int
	// byKindClean counts the packages found clean with each step checked against its kind
	// only (cleanByKind).
	byKindClean int
	// byKindErrors counts the packages whose errors were reported from the by-kind build
	// (byKindErrors), without a full build.
	byKindErrors int
	// syntax are the packages' parsed files by dir+"\x00"+package, with Options.KeepSyntax.
	syntax map[string]*build.Instance
}

// Load reads the scenarios in paths: .cue files (the scenarios that file declares, seeing the
// rest of its package), directories (every scenario of the CUE packages there) and Markdown
// documents (the fenced blocks marked "cue labrun"). The error, when not nil, is an Errors
// holding every problem found.
func Load(paths []string, opts Options) (*Result, error) {
	l := &loader{ctx: cuecontext.New(), opts: opts, res: &Result{}}
	if opts.Budget == (Budget{}) {
		for _, p := range paths {
			l.loadPath(p)
		}
	} else if e := l.loadWithin(paths, opts.Budget); e != nil {
		// The evaluation goes on in its goroutine: nothing of l may be read any more.
		return &Result{}, Errors{e}
	}
	l.noScenarioLeft()
	if opts.DropEvaluation {
		l.dropEvaluation()
	}
	l.res.Scenarios = onceBy(l.res.Scenarios, func(sc *Scenario) string {
		return fmt.Sprintf("%s\x00%d\x00%d\x00%s", sc.Pos.File, sc.Pos.Line, sc.Pos.Col, sc.Name)
	})
	l.res.Files = onceBy(l.res.Files, func(f string) string { return f })
	sort.SliceStable(l.warnings, func(i, j int) bool { return l.warnings[i].Pos.Less(l.warnings[j].Pos) })
	l.res.Warnings = onceBy(l.warnings, func(w *Warning) string {
		return w.Pos.String() + "\x00" + w.Scenario + "\x00" + w.Code + "\x00" + w.Msg
	})
	if opts.Strict {
		for _, w := range l.warnings {
			l.errs.add(w.Pos, w.Scenario, "warning[%s] (an error with --strict): %s", w.Code, w.Msg)
			if e := l.errs.errs[len(l.errs.errs)-1]; e.Pos == w.Pos && e.Path == w.Scenario {
				e.Warning = w.Code
			}
		}
		l.res.Warnings = nil
	}
	l.scenarioWarnings()
	l.dropPasteFollowOns()
	l.hideSyntaxSecrets()
	if err := l.errs.err(); err != nil {
		// After the follow-ons are dropped: the template's errors said what follows on from them.
		if l.kitRequiredAtCall() {
			l.errs.errs.Sort()
			return l.res, l.errs.errs
		}
		return l.res, err
	}
	return l.res, nil
}

// scenarioWarnings gives each scenario its warnings: those that name it, written in its
// folder (two scenarios of one name are in two folders' packages).
func (l *loader) scenarioWarnings() {
	for _, sc := range l.res.Scenarios {
		sc.Warnings = nil
		for _, w := range l.res.Warnings {
			if w.Scenario == sc.Name && filepath.Dir(w.Pos.File) == filepath.Dir(sc.Pos.File) {
				sc.Warnings = append(sc.Warnings, w)
			}
		}
	}
}

// onceBy is xs with each key (key) once, the first kept: a file named on the command line and
// through its folder too (labrun run suite suite/flaky.cue) is loaded twice, and its scenarios
// ran twice under one run id, counted as two scenarios; its warnings were said twice.
func onceBy[T any](xs []T, key func(T) string) []T {
	seen := map[string]bool{}
	var out []T
	for _, x := range xs {
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

type loader struct {
	// stepsOf are, while a build is decoded, the named steps of each of its scenarios (with
	// where each is written): otherSpecsSteps says whose a step is that another spec reads.
	stepsOf map[string]map[string]Pos
	ctx     *cue.Context
	opts    Options
	errs    errorList
	res     *Result
	// selfRefSaid holds the fields (file and path) whose `name: name` was said already: CUE
	// gives two errors of one, at its label and at its value.
	selfRefSaid map[string]bool
	// schemaFiles are the paths at which the embedded schema is overlaid; positions there are
	// never shown to users.
	schemaFiles map[string]bool
	// virtual maps overlay file names (Markdown turned CUE) to the documents they came from.
	virtual map[string]string
	// built says whether a package (other than a combination) was built already: its
	// garbage is collected before the next (buildInstance).
	built bool
	// virtualSrc holds the CUE source of each virtual file (for astPath).
	virtualSrc map[string][]byte
	// schemaV is the schema on its own; probe tests whether a definition is closed.
	schemaV, probe cue.Value
	// warnings are the lints' findings (lint.go).
	warnings []*Warning
	// varsSet are the --var names applied to a file's declared vars before evaluation,
	// varsFailed those whose value did not parse as the declared type (see vars.go).
	varsSet, varsFailed map[string]bool
	// top is _, filled into a definition to find what a pattern constraint gives a field.
	top cue.Value
	// stage is what is being evaluated, for a Load over budget (read by another goroutine).
	stage atomic.Pointer[stage]
	// excluded are the files of a directory left out of its packages (skip, scanSiblings).
	excluded map[string]bool
	// unreadable caches, by directory, its entries other than *.cue that are neither files
	// nor directories (a named pipe, a device): see overlay.
	unreadable map[string][]string
	// testFiles are the *_test.cue files refused (testFile), each said once.
	testFiles map[string]bool
	// defs caches what checkFields learns of each schema definition, by path.
	defs map[string]*defFacts
	// children caches childDef's answers, by the definition's path and the field's name.
	children map[string]cue.Value
	// refs decodes the package-level values the steps of the package being decoded reference,
	// once each (refMemo); nil outside a package's decoding.
	refs *refMemo
	// buildFiles are the user's files of the package being built (buildInstance), where an
	// error that CUE gives no position (a structural cycle) is looked up by its path.
	buildFiles []*ast.File
	// openFile is the open schema's syntax (openSchemaFile), parsed once per schema location.
	openFile *ast.File
	// shallowFiles are the schema's files with its step lists left open (shallowSchemaFiles).
	shallowFiles []*ast.File
	// byKindFile is the by-kind definitions of the schema's steps (byKindSchemaFiles).
	byKindFile *ast.File
	// combos is Options.Combinations while a combination is built (buildCombination).
	combos *Combinations
	// varReadsInst is the package being built, varReads what its CUE could read of its
	// scenarios' vars (pkgVarReads, made on first use).
	varReadsInst *build.Instance
	varReads     *pkgVarReads
	// comboReads is the package of the combination being built, whose reads its builds share.
	comboReads *comboPackage
	// compiled are the expressions compiled for the load's scenarios, by their names' key
	// (shareCompiled).
	compiled map[string]map[compiledKey]*Expr
	// namesKeys writes the names' keys, its buffers reused from scenario to scenario.
	namesKeys namesKeyWriter
	// undetached are the decoders of scenarios whose steps still look their fields' positions
	// up in their build's evaluation (detachEarlier).
	undetached []*decoder
	// pkgFound counts the scenarios found in each package (directory and name) by the files
	// and directories named; noScenarioFiles are the named files of packages that declared none
	// (file, package), said once the load is done (noScenarioLeft).
	pkgFound        map[string]int
	noScenarioFiles [][2]string
	// fieldPosOf are the detached steps' lookups of where their fields are written, by their
	// tables (sharedFieldPos).
	fieldPosOf map[string]sharedTable
	// kitMissing are the calls of kits' templates that leave out a required field
	// (checkKitHiddenParams), where kitRequiredAtCall says CUE's errors of it.
	kitMissing []kitMissing
	// retrying counts the builds of a package again without its broken files
	// (buildWithoutBroken), each without one more.
	retrying int
}

func (l *loader) loadPath(p string) {
	abs, err := filepath.Abs(p)
	if err != nil {
		l.errs.add(Pos{File: p}, "", "%v", err)
		return
	}
	l.setStage(Pos{File: abs}, "reading %s", p)
	fi, err := os.Stat(abs)
	if err != nil {
		if _, ok := l.opts.Overlay[abs]; !ok {
			l.errs.add(Pos{File: p}, "", "cannot read: %v", unwrapPathError(err))
			return
		}
	}
	switch {
	case fi != nil && fi.IsDir():
		l.loadDir(abs)
	case IsMarkdown(abs):
		l.loadMarkdown(abs, true)
	case strings.HasSuffix(abs, ".cue"):
		l.loadFile(abs)
	default:
		l.errs.add(Pos{File: abs}, "", "expected a .cue file, a .md document or a directory")
	}
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

func (l *loader) read(abs string) ([]byte, error) {
	if b, ok := l.opts.Overlay[abs]; ok {
		return b, nil
	}
	return os.ReadFile(abs)
}

// isTestFile reports whether a .cue file's name marks it a test file, which CUE's loader
// leaves out of its package (cue/load without Tests: "reserved for future testing
// functionality", cue help inputs).
func isTestFile(path string) bool { return strings.HasSuffix(filepath.Base(path), "_test.cue") }

// IsMarkdown says whether path names a Markdown document (.md, .markdown): what labrun reads
// as one, named on its own or found in a directory.
func IsMarkdown(path string) bool {
	// Whatever the letter case of the extension: GitHub and editors show GUIDE.MD as
	// Markdown, and before, a folder's load left it out in silence.
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".md" || ext == ".markdown"
}

// testFile refuses a *_test.cue file of a package labrun loads: CUE leaves it out, so the
// scenarios it declares would never run, and a folder of them would pass without them.
func (l *loader) testFile(path string) {
	if l.testFiles == nil {
		l.testFiles = map[string]bool{}
	}
	if l.testFiles[path] {
		return
	}
	l.testFiles[path] = true
	l.errs.add(Pos{File: path, Line: 1, Col: 1}, "", "CUE leaves files named *_test.cue out of the packages it loads (it reserves them for tests), so labrun would never see what this file declares: its scenarios would not run; rename it, e.g. %s", strings.TrimSuffix(filepath.Base(path), "_test.cue")+".cue")
}

// loadFile loads the package of a .cue file and keeps the scenarios declared in that file.
func (l *loader) loadFile(abs string) {
	if isTestFile(abs) {
		l.testFile(abs)
		return
	}
	if _, ok := l.opts.Overlay[abs]; !ok {
		if why := irregular(abs); why != "" {
			l.errs.add(Pos{File: abs}, "", "cannot read: %s", why)
			return
		}
	}
	src, err := l.read(abs)
	if err != nil {
		l.errs.add(Pos{File: abs}, "", "cannot read: %v", unwrapPathError(err))
		return
	}
	if why := unreadableText(src); why != "" {
		l.errs.add(Pos{File: abs, Line: 1, Col: 1}, "", "%s", why)
		return
	}
	// Without the byte order mark an editor on Windows may write: CUE's parser counts its
	// three bytes in line 1's columns ("pakage lab" refused at 1:11 of a ten-character
	// line), where cue/load, which builds the package, and editors count none.
	f, err := parser.ParseFile(abs, withoutBOM(src), parser.ParseComments)
	if err != nil {
		l.addCUEError(err)
		return
	}
	if l.refuseBuildAttr(abs, f) {
		return
	}
	l.res.Files = append(l.res.Files, abs)
	only := topLevelLabels(f)
	if f.PackageName() != "" && l.opts.Combinations != nil {
		l.opts.Combinations.scanSiblings(l, filepath.Dir(abs), abs, f.PackageName())
	} else if f.PackageName() != "" {
		l.scanSiblings(filepath.Dir(abs), abs, f.PackageName())
	}
	if base := filepath.Base(abs); f.PackageName() != "" && (strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".")) {
		// CUE builds a package without such a file, even when it is named: its scenarios
		// would be "not declared".
		pos := Pos{File: l.userFile(abs), Line: 1, Col: 1}
		if pc := packageClause(f); pc != nil {
			pos.Line, pos.Col = pc.Pos().Line(), pc.Pos().Column()
		}
		l.errs.add(pos, "", "CUE leaves a file whose name begins with %q out of its package (%s), so its scenarios cannot be loaded: rename the file, or remove its package clause to load it alone", base[:1], f.PackageName())
		return
	}
	if f.PackageName() == "" {
		// A file without a package clause stands alone.
		l.build(filepath.Dir(abs), []string{abs}, "", only, abs)
		return
	}
	if l.opts.Combinations != nil && l.buildCombination(filepath.Dir(abs), f.PackageName(), only, abs) {
		return
	}
	l.build(filepath.Dir(abs), []string{"."}, f.PackageName(), only, abs)
}

// packageClause is f's package clause, or nil.
func packageClause(f *ast.File) *ast.Package {
	for _, d := range f.Decls {
		if pc, ok := d.(*ast.Package); ok {
			return pc
		}
	}
	return nil
}

// buildAttr is a file-level @if(...) or @ignore() attribute of f (before its package
// clause), nil when it has none: CUE leaves such a file out of its package unless the tag is
// set (cue -t), which labrun never sets, so the file's scenarios would not run.
func buildAttr(f *ast.File) *ast.Attribute {
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.Package:
			return nil
		case *ast.Attribute:
			if k, _ := x.Split(); k == "if" || k == "ignore" {
				return x
			}
		}
	}
	return nil
}

// buildAttrWhy says why a file with build attribute a is left out of its package.
func buildAttrWhy(a *ast.Attribute) string {
	if k, _ := a.Split(); k == "ignore" {
		return fmt.Sprintf("%s: CUE leaves this file out of its package: its scenarios are not loaded (remove the attribute to load them)", a.Text)
	}
	return fmt.Sprintf("%s: CUE leaves this file out of its package unless the tag is set (cue -t), and labrun sets no tag: its scenarios are not loaded (remove the attribute to load them; choose scenarios with --scenario or --tag)", a.Text)
}

// refuseBuildAttr refuses, at its attribute, a file named on its own that CUE leaves out of
// its package; false when f has no such attribute.
func (l *loader) refuseBuildAttr(path string, f *ast.File) bool {
	a := buildAttr(f)
	if a == nil {
		return false
	}
	l.errs.add(Pos{File: l.userFile(path), Line: a.Pos().Line(), Col: a.Pos().Column()}, "", "%s", buildAttrWhy(a))
	return true
}

// skipBuildAttr leaves out, with a warning that names it, a file of a folder's load (or a
// named file's sibling) that CUE leaves out of its package, as it does a file named _*.cue:
// before, run, vet and plan of the folder passed without its scenarios in silence (vet
// counted the file among those it loaded).
func (l *loader) skipBuildAttr(path string, f *ast.File) bool {
	a := buildAttr(f)
	if a == nil {
		return false
	}
	l.skip(path, fmt.Sprintf("line %d: %s", a.Pos().Line(), buildAttrWhy(a)))
	return true
}

// loadDir loads every CUE package in a directory.
func (l *loader) loadDir(abs string) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		l.errs.add(Pos{File: abs}, "", "cannot read: %v", unwrapPathError(err))
		return
	}
	pkgs := map[string]bool{}
	var loose []string
	refused := 0 // files found and refused as unreadable text
	var mds []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		p := filepath.Join(abs, name)
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			// CUE leaves such a file out of its package, and so does a directory's load; a
			// scenario in it would not run, and nothing would say so.
			if strings.HasSuffix(name, ".cue") || IsMarkdown(name) {
				l.skip(p, fmt.Sprintf("a file whose name begins with %q is left out of a directory's load, as CUE leaves it out of a package: its scenarios are not loaded (rename the file to load them)", name[:1]))
			}
			continue
		}
		switch {
		case isTestFile(name):
			l.testFile(p)
		case strings.HasSuffix(name, ".cue"):
			if _, ok := l.opts.Overlay[p]; !ok {
				if why := irregular(p); why != "" {
					l.skip(p, why)
					continue
				}
			}
			src, err := l.read(p)
			if err != nil {
				l.skip(p, fmt.Sprintf("cannot read: %v", unwrapPathError(err)))
				continue
			}
			if why := unreadableText(src); why != "" {
				refused++ // found: not "no .cue or .md files in this directory"
				l.errs.add(Pos{File: p, Line: 1, Col: 1}, "", "%s", why)
				continue
			}
			f, err := parser.ParseFile(p, src, parser.PackageClauseOnly)
			if err != nil {
				l.addCUEError(err)
				continue
			}
			if l.skipBuildAttr(p, f) {
				continue
			}
			l.res.Files = append(l.res.Files, p)
			if f.PackageName() == "" {
				loose = append(loose, p)
			} else {
				pkgs[f.PackageName()] = true
			}
		case IsMarkdown(name):
			// .markdown too, as a document named on its own: before, a folder's load
			// left it out in silence, and its failing spec never ran.
			mds = append(mds, p)
		}
	}
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		l.build(abs, []string{"."}, n, nil, "")
	}
	for _, p := range loose {
		l.build(abs, []string{p}, "", nil, p)
	}
	for _, p := range mds {
		l.loadMarkdown(p, false)
	}
	if len(names) == 0 && len(loose) == 0 && len(mds) == 0 && refused == 0 {
		l.errs.add(Pos{File: abs}, "", "no .cue or .md files in this directory")
	}
}

// irregular says why path, named *.cue, cannot be read as a CUE file (a named pipe would
// block the read forever, a dangling symlink has nothing to read), or "" when it is a regular
// file or a symlink to one.
func irregular(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		if lfi, lerr := os.Lstat(path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			return fmt.Sprintf("a symlink to %s, which cannot be read: %v", target, unwrapPathError(err))
		}
		return fmt.Sprint(unwrapPathError(err))
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory, not a file"
	default:
		return schema.FileKind(m) + ", not a regular file"
	}
}

// skip leaves a file named *.cue out of every package of its directory, with a warning: CUE
// would block on it or fail with a message that names nothing.
func (l *loader) skip(path, why string) {
	if l.excluded == nil {
		l.excluded = map[string]bool{}
	}
	if l.excluded[path] {
		return
	}
	l.excluded[path] = true
	l.res.Skipped = append(l.res.Skipped, &Error{Pos: Pos{File: path}, Msg: why})
}

// scanSiblings prepares loading the package pkg of the named file abs: the other *.cue files
// of its directory that CUE would read are checked first. Files that cannot be read are
// skipped (skip); files of another package (or whose package clause does not parse) are left
// out, so that their syntax errors, reported as warnings at their own positions, do not hide
// the named file's result.
func (l *loader) scanSiblings(dir, abs, pkg string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		if p == abs || !strings.HasSuffix(name, ".cue") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if _, ok := l.opts.Overlay[p]; ok {
			continue
		}
		if why := irregular(p); why != "" {
			if !e.IsDir() {
				l.skip(p, why)
			}
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			l.skip(p, fmt.Sprintf("cannot read: %v", unwrapPathError(err)))
			continue
		}
		if why := unreadableText(src); why != "" {
			l.skip(p, why+" (not loaded)")
			continue
		}
		f, err := parser.ParseFile(p, src, parser.PackageClauseOnly)
		if err == nil && f.PackageName() == pkg {
			if isTestFile(p) {
				l.testFile(p) // left out of the package the named file is built in
			}
			// Left out of the package when it has a build attribute, and said so.
			l.skipBuildAttr(p, f)
			continue // the same package: its errors are the named file's too
		}
		if err == nil && f.PackageName() == "" {
			continue // a file without a package clause stands alone; CUE leaves it out
		}
		if err == nil {
			if _, err = parser.ParseFile(p, withoutBOM(src)); err == nil {
				continue // a valid file of another package: CUE leaves it out
			}
		}
		if l.excluded == nil {
			l.excluded = map[string]bool{}
		}
		l.excluded[p] = true
		for _, e := range cueerrors.Errors(err) {
			format, args := e.Msg()
			l.res.Skipped = append(l.res.Skipped, &Error{Pos: withinLine(l.pos(e.Position()), l.sourceLine(e.Position())),
				Msg: fmt.Sprintf(format, args...) + " (not loaded: " + otherPackage(f) + ")"})
		}
	}
}

func otherPackage(f *ast.File) string {
	if f != nil && f.PackageName() != "" {
		return "another package, " + f.PackageName()
	}
	return "its package clause does not parse"
}

// unpairedExpected reports the fences labrun doc would never check: an expected-output block
// (labrun-expect) before any spec or after another one of the same spec (labrun doc compares
// the first block after a spec with its run), and a fence whose info names labrun in a way
// that is neither a spec (cue labrun) nor an expected block (a misspelled labrun-expect would
// be read as plain text).
func (l *loader) unpairedExpected(abs string, fences []Fence) bool {
	bad := false
	spec, paired := 0, false
	for _, f := range fences {
		pos := Pos{File: abs, Line: f.Line, Col: f.Indent + 1}
		switch {
		case f.IsSpec():
			spec, paired = f.Line, false
		case f.HasWord(expectWord):
			switch {
			case spec == 0:
				l.errs.add(pos, "", "an expected-output block (%s) before any spec: labrun doc compares the first block after a spec (```cue labrun) with its run, so this one would never be checked; move it after the spec whose run it shows", expectWord)
				bad = true
			case paired:
				l.errs.add(pos, "", "a second expected-output block (%s) after the spec at line %d: labrun doc compares only the first with the run, so this one would never be checked; merge the two, or give it a spec of its own", expectWord, spec)
				bad = true
			}
			paired = true
		default:
			if why := f.NearMiss(); why != "" {
				l.errs.add(pos, "", "fence %q: %s: labrun would read this block as plain text", f.Marker+f.Info, why)
				bad = true
			}
		}
	}
	return bad
}

// unreadFences refuses a fence that a reader sees as a labrun spec or expected-output block
// (or one that names labrun) but labrun does not read: one inside a list item or a blockquote.
// Before, such a block was silently left out: a spec never ran, an expected block was never
// compared, and the document passed.
func (l *loader) unreadFences(abs string, doc []byte, fences []Fence) bool {
	bad := false
	for _, f := range UnreadFences(doc, fences) {
		what := unreadWhat(f.Fence)
		if what == "" {
			continue
		}
		where := "here"
		if f.Container != "" {
			where = "inside a " + f.Container
		}
		move := "put it at the left margin"
		if f.Container != "" {
			move = "move it out of the " + f.Container + ", to the left margin"
		}
		l.errs.add(Pos{File: abs, Line: f.Line, Col: f.Indent + 1}, "",
			"fence %q %s is not read by labrun, which reads only fences at the left margin (at most 3 spaces before the marker, no > or list marker), so %s: %s",
			f.Marker+f.Info, where, what, move)
		bad = true
	}
	return bad
}

// unreadWhat is what is lost when labrun does not read fence f: its spec never runs, its
// expected output is never compared, or (a near miss of either) it reads as plain text; ""
// for a fence that is none of these.
func unreadWhat(f Fence) string {
	switch {
	case f.IsSpec():
		return "this spec would never run"
	case f.HasWord(expectWord):
		return "this expected output would never be compared with a run"
	case f.NearMiss() != "":
		return "it would be read as plain text (" + f.NearMiss() + ")"
	}
	return ""
}

// htmlFences refuses a labrun fence (a spec, an expected-output block, one that names labrun)
// inside an HTML block other than a comment: a Markdown reader shows it as HTML text, not as
// a code block (<details> with no blank line after it, <pre>), so labrun does not read it, and
// the document would pass without its spec run or its output compared. A fence inside a
// comment is commented out: neither shows nor runs. Before, labrun read both as fences.
func (l *loader) htmlFences(abs string, doc []byte) bool {
	bad := false
	for _, f := range HTMLFences(doc) {
		what := unreadWhat(f.Fence)
		if f.Block.Comment || what == "" {
			continue
		}
		l.errs.add(Pos{File: abs, Line: f.Line, Col: f.Indent + 1}, "",
			"fence %q is inside the HTML block that begins at line %d (%s): a Markdown reader shows it as HTML text, not as a code block, and labrun does not read it, so %s: end the HTML block before it (a blank line after its tag) or move the fence out of it",
			f.Marker+f.Info, f.Block.Line, Truncate(f.Block.Tag, 40), what)
		bad = true
	}
	return bad
}

// NoSpecInDocument begins the problem of a Markdown document named to be checked that has
// no labrun fence (one in a directory is passed over).
const NoSpecInDocument = "no labrun spec in this document"

// loadMarkdown loads the labrun spec fences of a Markdown document as one CUE file whose lines
// are the document's lines, so that positions point into the document.
func (l *loader) loadMarkdown(abs string, named bool) {
	doc, err := l.read(abs)
	if err != nil {
		l.errs.add(Pos{File: abs}, "", "cannot read: %v", unwrapPathError(err))
		return
	}
	if why := unreadableText(doc); why != "" {
		l.errs.add(Pos{File: abs, Line: 1, Col: 1}, "", "%s", why)
		return
	}
	l.res.Files = append(l.res.Files, abs)
	if l.htmlFences(abs, doc) {
		return // before the fences' own errors: a fence left out there may leave its closing line opening one
	}
	fences := Fences(doc)
	specs := 0
	for _, f := range fences {
		if f.EndLine == 0 {
			l.errs.add(Pos{File: abs, Line: f.Line, Col: f.Indent + 1}, "",
				"the fence opened here is never closed: expected a closing %s line", f.Marker)
			return
		}
		if f.IsSpec() {
			specs++
		}
	}
	for _, f := range fences {
		if n, text := f.SwallowedSpec(); n > 0 {
			l.errs.add(Pos{File: abs, Line: f.Line, Col: f.Indent + 1}, "",
				"the fence opened here (%s) holds the spec's opening line %d (%s) as its text, so the spec would never run: a fence ends only at a line of %s alone; expected a closing %s line before line %d",
				f.Marker+f.Info, n, text, f.Marker, f.Marker, n)
			return
		}
	}
	if l.unreadFences(abs, doc, fences) {
		return
	}
	if specs == 0 && !named {
		// A document in a directory may well hold no spec, but not a fence meant as one (or
		// as its expected output) that labrun would read as plain text.
		l.unpairedExpected(abs, fences)
		return
	}
	if specs == 0 {
		// Point at the first fence that was probably meant as a spec: cue without the word
		// labrun, or labrun without the language cue.
		var near []string
		pos := Pos{File: abs, Line: 1, Col: 1}
		for _, f := range fences {
			if strings.EqualFold(f.Lang(), "cue") || f.HasWord("labrun") || strings.Contains(strings.ToLower(f.Info), "labrun") {
				near = append(near, fmt.Sprintf("line %d (%q)", f.Line, f.Marker+f.Info))
				if len(near) == 1 {
					pos = Pos{File: abs, Line: f.Line, Col: f.Indent + 1}
				}
			}
		}
		for _, n := range indentedSpecLines(doc, fences) {
			near = append(near, fmt.Sprintf("line %d (indented by a tab or 4 spaces: a code block, not a fence, which starts at most 3 spaces in)", n))
			if len(near) == 1 {
				pos = Pos{File: abs, Line: n, Col: 1}
			}
		}
		msg := NoSpecInDocument + ": expected a fence opened with ```cue labrun"
		if len(near) > 0 {
			msg += "; fences that are almost one: " + strings.Join(near, ", ")
		}
		l.errs.add(pos, "", "%s", msg)
		return
	}
	if l.unpairedExpected(abs, fences) {
		return
	}
	if l.repeatedPackage(abs, fences) {
		return
	}
	virt := abs + ".cue"
	if l.virtual == nil {
		l.virtual = map[string]string{}
	}
	l.virtual[virt] = abs
	src := specSource(doc, fences)
	if l.virtualSrc == nil {
		l.virtualSrc = map[string][]byte{}
	}
	l.virtualSrc[virt] = src
	f, err := parser.ParseFile(virt, src, parser.ParseComments)
	if err != nil {
		l.addMarkdownSyntaxError(err, abs, virt, doc, fences)
		return
	}
	l.build(filepath.Dir(abs), []string{virt}, "", topLevelLabels(f), virt, overlayFile{virt, src})
}

// repeatedPackage reports a package clause in a spec block after the first: the blocks of a
// document are one CUE file, whose package clause (and imports) the first block holds.
func (l *loader) repeatedPackage(abs string, fences []Fence) bool {
	first := true
	found := false
	for _, f := range fences {
		if !f.IsSpec() {
			continue
		}
		if first {
			first = false
			continue
		}
		for i, line := range strings.Split(f.Content, "\n") {
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "//") {
				continue
			}
			if strings.HasPrefix(t, "package ") {
				col := len(line) - len(strings.TrimLeft(line, " \t")) + f.Indent + 1
				l.errs.add(Pos{File: abs, Line: f.Line + 1 + i, Col: col}, "",
					"a package clause belongs in the first cue labrun block only: the spec blocks of a document are one CUE file; remove it here, and the imports the first block already has")
				found = true
			}
			break
		}
	}
	return found
}

// addMarkdownSyntaxError reports the syntax errors of a document's specs. The specs are parsed
// as one file in which every line outside them is blank, so an unclosed brace in one block runs
// on through the next ones and CUE reports it at the end of the document, often after a cascade
// of other errors. So each block is parsed alone (with the same line numbers): its errors inside
// it are reported as they are, and running out of input at its closing fence, which is where
// the block ends before its CUE does. Only when every block parses alone (a construct split
// across blocks) are the errors of the whole reported.
func (l *loader) addMarkdownSyntaxError(err error, abs, virt string, doc []byte, fences []Fence) {
	reported := false
	for _, f := range fences {
		if !f.IsSpec() {
			continue
		}
		_, berr := parser.ParseFile(virt, specSource(doc, []Fence{f}), parser.ParseComments)
		if berr == nil {
			continue
		}
		reported = true
		var inside cueerrors.Error
		var outside []cueerrors.Error
		for _, e := range cueerrors.Errors(berr) {
			if e.Position().Line() < f.EndLine {
				inside = cueerrors.Append(inside, e)
			} else {
				outside = append(outside, e)
			}
		}
		if inside != nil {
			l.addCUEError(inside) // what follows at the end of the block is their cascade
			continue
		}
		for _, e := range outside {
			format, args := e.Msg()
			l.errs.add(Pos{File: abs, Line: f.EndLine, Col: f.Indent + 1}, "",
				"the block opened at line %d ends before its CUE does (an unclosed brace, bracket or string?): %s",
				f.Line, fmt.Sprintf(format, args...))
		}
	}
	if !reported {
		l.addCUEError(err)
	}
}

type overlayFile struct {
	path string
	src  []byte
}

// topLevelLabels returns the names of the fields a file declares at its top level.
func topLevelLabels(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.Field); ok {
			if name, _, err := ast.LabelName(fd.Label); err == nil {
				out[name] = true
			}
		}
	}
	return out
}

// moduleRoot finds the directory holding cue.mod above dir, and the module's name.
func moduleRoot(dir string) (root, module string) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "cue.mod", "module.cue"))
		if err == nil {
			if m := moduleRE.FindSubmatch(b); m != nil {
				return d, string(m[1])
			}
			return d, ""
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// excludedPackage is the package of files left out of loading (see skip).
const excludedPackage = "labrun_excluded_file"

var moduleRE = regexp.MustCompile(`(?m)^\s*module:\s*"([^"]+)"`)

// overlay makes the embedded schema importable as labrun.dev/schema from dir: in the labrun
// repository itself (module labrun.dev) it replaces schema/; in another module it is placed under
// cue.mod/pkg; outside any module a module is overlaid at dir.
func (l *loader) overlay(dir string, extra ...overlayFile) map[string]load.Source {
	ov := map[string]load.Source{}
	for p, b := range l.opts.Overlay {
		ov[p] = load.FromBytes(b)
	}
	for _, f := range extra {
		ov[f.path] = load.FromBytes(f.src)
	}
	for _, p := range l.unreadableIn(dir) {
		// CUE reads every file of the directory whose extension it knows (x.json, x.yaml,
		// x.xml…), part of no package: a named pipe blocked the load until --eval-timeout,
		// which said the package's evaluation was over its budget. Nothing reads them here.
		ov[p] = load.FromString("")
	}
	for p := range l.excluded {
		if filepath.Dir(p) == dir {
			// Seen through the overlay, the file is a valid file of a package of its own,
			// which no build asks for: CUE neither opens nor reports it.
			ov[p] = load.FromString("package " + excludedPackage + "\n")
		}
	}
	root, module := moduleRoot(dir)
	var schemaDir string
	switch {
	case root == "":
		root = dir
		ov[filepath.Join(root, "cue.mod", "module.cue")] = load.FromString(
			"module: \"labrun.local@v0\"\nlanguage: version: \"v0.17.0\"\n")
		schemaDir = filepath.Join(root, "cue.mod", "pkg", "labrun.dev", "schema")
	case strings.TrimSuffix(module, "@v0") == "labrun.dev":
		schemaDir = filepath.Join(root, "schema")
	default:
		schemaDir = filepath.Join(root, "cue.mod", "pkg", "labrun.dev", "schema")
	}
	if l.schemaFiles == nil {
		l.schemaFiles = map[string]bool{}
	}
	entries, _ := schema.Files.ReadDir(".")
	for _, e := range entries {
		b, _ := schema.Files.ReadFile(e.Name())
		p := filepath.Join(schemaDir, e.Name())
		ov[p] = load.FromBytes(b)
		l.schemaFiles[p] = true
	}
	return ov
}

// unreadableIn lists dir's entries other than *.cue that are neither regular files (nor
// links to one) nor directories: a named pipe, a device, a socket (a *.cue one is skipped
// with a warning: skip).
func (l *loader) unreadableIn(dir string) []string {
	if got, ok := l.unreadable[dir]; ok {
		return got
	}
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type().IsRegular() || e.IsDir() || strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err == nil && (fi.Mode().IsRegular() || fi.IsDir()) {
			continue // a link to a file or a folder
		}
		out = append(out, p)
	}
	if l.unreadable == nil {
		l.unreadable = map[string][]string{}
	}
	l.unreadable[dir] = out
	return out
}

// openSchema is the schema with every definition open and unconstrained: building a package
// against it yields exactly what the user wrote, free of schema errors, for decoding. It is
// written from the schema's syntax (its top-level definitions), so that a valid package never
// needs the schema compiled on its own (only problems are explained with it).
func (l *loader) openSchema() string {
	var b strings.Builder
	b.WriteString("package schema\n#Scenario: {_labrunScenario: true, ...}\n")
	for _, name := range schemaDefinitions() {
		if name != "#Scenario" {
			b.WriteString(name + ": _\n")
		}
	}
	return b.String()
}

// schemaDefinitions are the names of the schema's top-level definitions, in file order.
var schemaDefinitions = sync.OnceValue(func() []string {
	var names []string
	seen := map[string]bool{}
	entries, _ := schema.Files.ReadDir(".")
	for _, e := range entries {
		src, _ := schema.Files.ReadFile(e.Name())
		f, err := parser.ParseFile(e.Name(), src)
		if err != nil {
			continue // the schema's own test parses every file
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if id, ok := fd.Label.(*ast.Ident); ok && strings.HasPrefix(id.Name, "#") && !seen[id.Name] {
				seen[id.Name] = true
				names = append(names, id.Name)
			}
		}
	}
	return names
})

// schema returns the compiled schema, compiled once per loader.
func (l *loader) schema() cue.Value {
	if !l.schemaV.Exists() {
		l.schemaV = schemaValue(l.ctx)
		l.probe = l.ctx.CompileString("{zzz_labrun_probe: _}")
	}
	return l.schemaV
}

// build loads and builds one CUE instance, then decodes its scenarios. only, when not nil,
// keeps the scenarios whose names are in it; file names the file those scenarios come from.
//
// The package is built against the schema, for its errors, and against an open schema, for
// what the user wrote: a value with an error cannot be walked in CUE, and the positions and
// field order that plans, reports and messages show are those of the user's own conjuncts
// (under the schema a field has one conjunct more, and finding the user's costs an evaluation
// of each). The open copy is the cheap one (no constraint to check). When the schema's value
// has no error at all, its per-scenario checks (concrete validation, checkFields) are skipped:
// they have nothing to find.
func (l *loader) build(dir string, args []string, pkg string, only map[string]bool, file string, extra ...overlayFile) {
	where := Pos{File: dir}
	if file != "" {
		where = Pos{File: l.userFile(file)}
	}
	what := "package " + pkg
	if pkg == "" {
		what = "the file"
	}
	if len(only) > 0 {
		what += " (for " + scenarioList(only) + ")"
	}
	l.setStage(where, "building %s", what)
	insts := load.Instances(args, &load.Config{Dir: dir, Overlay: l.overlay(dir, extra...), Package: pkg})
	for _, inst := range insts {
		l.applyVars(inst, true)
	}
	for _, inst := range insts {
		if inst.Err != nil {
			l.addCUEError(inst.Err)
			l.buildWithoutBroken(inst.Err, dir, args, pkg, only, file, extra...)
			continue
		}
		before := len(l.errs.errs)
		l.buildInstance(inst, l.openCopy(inst), only, file)
		if l.opts.KeepSyntax && len(l.errs.errs) == before && pkg != "" && len(extra) == 0 && len(args) == 1 && args[0] == "." {
			if l.res.syntax == nil {
				l.res.syntax = map[string]*build.Instance{}
			}
			l.res.syntax[dir+"\x00"+pkg] = inst
		}
	}
}

// buildWithoutBroken builds a directory's package again without the files whose syntax err
// (CUE's load failed) refuses, so that a vet of a folder with one broken file still says the
// problems of the others: before, one missing bracket in a.cue hid every mistake of b.cue, and
// b.cue's were found only once a.cue was fixed. A reference the others make to something the
// broken files may declare (a kit's #Load) is not said: it is the broken file's mistake.
func (l *loader) buildWithoutBroken(err error, dir string, args []string, pkg string, only map[string]bool, file string, extra ...overlayFile) {
	if pkg == "" || len(args) != 1 || args[0] != "." || len(extra) > 0 || l.retrying >= 8 {
		return
	}
	broken := map[string][]byte{}
	for _, e := range cueerrors.Errors(err) {
		p := e.Position()
		if !p.IsValid() {
			return // an error of no file: nothing to leave out
		}
		f := p.Filename()
		if filepath.Dir(f) != dir || !strings.HasSuffix(f, ".cue") || l.excluded[f] {
			return
		}
		if _, ok := l.opts.Overlay[f]; ok {
			return
		}
		if _, ok := broken[f]; !ok {
			src, rerr := os.ReadFile(f)
			if rerr != nil {
				return
			}
			broken[f] = src
		}
	}
	if len(broken) == 0 {
		return
	}
	if l.excluded == nil {
		l.excluded = map[string]bool{}
	}
	for f := range broken {
		l.excluded[f] = true
	}
	before := len(l.errs.errs)
	l.retrying++ // CUE's load says the first broken file's errors: the next is found again
	l.build(dir, args, pkg, only, file)
	l.retrying--
	for f := range broken {
		delete(l.excluded, f)
	}
	// What the broken files may have declared: a reference to it, or a package left with no
	// scenario, follows on from them.
	kept := l.errs.errs[:before]
	for _, e := range l.errs.errs[before:] {
		if m := refNotFoundRE.FindStringSubmatch(e.Msg); m != nil {
			declared := false
			for _, src := range broken {
				declared = declared || strings.Contains(string(src), m[1])
			}
			if declared {
				continue
			}
		}
		if strings.Contains(e.Msg, "no scenario") || strings.Contains(e.Msg, "build constraints exclude all CUE files") {
			continue // no file left once the broken ones are out: nothing more to say
		}
		kept = append(kept, e)
	}
	l.errs.errs = kept
}

// openCopy is inst built against the open schema instead: the same parsed files (with the
// --var values already applied), the schema package replaced by the open one in inst and in
// every package it imports. Nothing is parsed again; the files are only read by the builds.
func (l *loader) openCopy(inst *build.Instance) *build.Instance {
	clones := map[*build.Instance]*build.Instance{}
	if l.combos != nil {
		clones = l.combos.open // the imports' copies, built once in the combinations' context
	}
	c, _ := withSchema(inst, clones, func(s *build.Instance) bool {
		s.Files = []*ast.File{l.openSchemaFile(s)}
		s.Imports = nil
		return true
	})
	return c
}

// withSchema is a copy of inst in which the schema package, imported by inst or by any package
// it imports, is a copy that schema changes (its files); the other packages are copies holding
// the same parsed files. clones keeps the copies of the imports, for later calls; ok is false
// when schema said it could not.
func withSchema(inst *build.Instance, clones map[*build.Instance]*build.Instance, schema func(*build.Instance) bool) (c *build.Instance, ok bool) {
	ok = true
	var clone func(b *build.Instance) *build.Instance
	clone = func(b *build.Instance) *build.Instance {
		if c, found := clones[b]; found {
			return c
		}
		c := *b
		if b.ImportPath == schemaImportPath {
			ok = schema(&c) && ok
		} else {
			c.Imports = make([]*build.Instance, len(b.Imports))
			for i, imp := range b.Imports {
				c.Imports[i] = clone(imp)
			}
		}
		if b != inst {
			clones[b] = &c
		}
		return &c
	}
	return clone(inst), ok
}

// openSchemaFile is the open schema (openSchema) parsed as the first file of the schema
// package si, so that its positions are the schema's, which are never shown.
func (l *loader) openSchemaFile(si *build.Instance) *ast.File {
	name := "open-schema.cue"
	if len(si.Files) > 0 {
		name = si.Files[0].Filename
	}
	if l.openFile == nil || l.openFile.Filename != name {
		f, err := parser.ParseFile(name, l.openSchema())
		if err != nil {
			panic("labrun: the open schema does not parse: " + err.Error()) // a bug of labrun's, not the user's
		}
		l.openFile = f
	}
	return l.openFile
}

// clean reports whether the built package v has no error at all, the schema's included (each
// scenario validated as concrete, as scenario does, and passing scenarioClean when given).
func (l *loader) clean(v cue.Value, scenarioClean func(sv cue.Value) bool) bool {
	_, ok := l.cleanTop(v, scenarioClean, nil)
	return ok
}

// cleanTop is clean, with hiddenClean (nil: not asked) called on each hidden field or
// definition of v that is a #Scenario. With a clean v it also returns v's regular top-level
// fields in the order Fields gives them: the package's fields, for its other builds to look
// up (topFields) instead of ordering them again (ordering a package's top level is
// quadratic-ish in its fields: a third of vet's own CUE work at 1,000 files did it three
// times).
func (l *loader) cleanTop(v cue.Value, scenarioClean, hiddenClean func(sv cue.Value) bool) ([]cue.Selector, bool) {
	if v.Err() != nil || v.Validate() != nil {
		return nil, false
	}
	opts := []cue.Option{}
	if hiddenClean != nil {
		opts = append(opts, cue.Hidden(true), cue.Definitions(true))
	}
	it, err := v.Fields(opts...)
	if err != nil {
		return nil, false
	}
	var top []cue.Selector
	for it.Next() {
		sv := it.Value()
		regular := it.Selector().LabelType() == cue.StringLabel
		if regular {
			top = append(top, it.Selector())
		}
		if !sv.LookupPath(scenarioMarker).Exists() {
			continue
		}
		if !regular {
			// Not a scenario of the load; hiddenClean says whether it is clean enough.
			if !hiddenClean(sv) {
				return nil, false
			}
			continue
		}
		l.setStage(l.stagePos(), "validating scenario %s", it.Selector())
		if sv.Validate(cue.Concrete(true)) != nil || (scenarioClean != nil && !scenarioClean(sv)) {
			return nil, false
		}
	}
	return top, true
}

// field is a top-level field of a build.
type field struct {
	sel cue.Selector
	v   cue.Value
}

// topFields are the regular top-level fields of v: those named by top (another build of the
// same package's files, whose top level is theirs: the schema adds no top-level field), looked
// up, or v.Fields() when top is nil or names a field v does not have.
func topFields(v cue.Value, top []cue.Selector) ([]field, error) {
	if top != nil {
		out := make([]field, 0, len(top))
		for _, sel := range top {
			fv := v.LookupPath(cue.MakePath(sel))
			if !fv.Exists() {
				out = nil
				break
			}
			out = append(out, field{sel, fv})
		}
		if out != nil {
			return out, nil
		}
	}
	it, err := v.Fields()
	if err != nil {
		return nil, err
	}
	var out []field
	for it.Next() {
		out = append(out, field{it.Selector(), it.Value()})
	}
	return out, nil
}

// scenarioList names the scenarios of a set: "scenario s", "scenarios a, b".
func scenarioList(names map[string]bool) string {
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	if len(list) == 1 {
		return "scenario " + list[0]
	}
	return "scenarios " + strings.Join(list, ", ")
}

// builtHook, when a test sets it, is called with each package's open copy before it is built.
var builtHook func(*build.Instance)

// buildStartHook, when a test sets it, is called at the start of each package's build, once
// the earlier builds' garbage is collected.
var buildStartHook func()

// minBuildGarbage is the least garbage worth a collection between builds
// (garbageWorthCollecting).
const minBuildGarbage = 8 << 20

// garbageWorthCollecting says whether a heap of heap bytes of objects, of which the last
// collection kept live, holds garbage worth collecting between builds (a package's dead
// build, or the earlier packages' before the next): at least as much as is live (a cycle
// costs what it marks, the live heap, and saves what it frees) and at least minBuildGarbage.
// The measured cases are its test's.
func garbageWorthCollecting(heap, live uint64) bool {
	if heap < live {
		return false
	}
	garbage := heap - live
	return garbage >= live && garbage >= minBuildGarbage
}

// collectBeforeBuild collects the garbage of the earlier builds when there is enough of it
// (garbageWorthCollecting); a test replaces it.
var collectBeforeBuild = func() {
	heap, ok := heapObjects()
	live, liveOK := liveHeap()
	if ok && liveOK && garbageWorthCollecting(heap, live) {
		runtime.GC()
	}
}

// liveHeap is the heap that the last collection marked live, and whether the runtime says.
func liveHeap() (uint64, bool) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}

// heapObjects is the size of the heap's objects, live or not yet collected, and whether the
// runtime says.
func heapObjects() (uint64, bool) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}

// scenarioMarker is the hidden field that #Scenario sets in every scenario.
var scenarioMarker = cue.MakePath(cue.Hid("_labrunScenario", schema.ImportPath))

// schemaImportPath is the schema package's import path (schema.ImportPath), for functions whose
// parameter is called schema.
const schemaImportPath = schema.ImportPath

func (l *loader) buildInstance(inst, openInst *build.Instance, only map[string]bool, file string) {
	// Each build has a cue.Context of its own, so that what an evaluation holds becomes
	// garbage once its package is decoded (Scenarios hold no CUE value), and the schema's
	// value of a valid package is let go before the open copy is built: the peak is one
	// build, not every build of the Load.
	l.detachEarlier() // before this build's collections below: their evaluations are garbage then
	// The steps of each scenario this build decodes, by name: a Markdown document's specs
	// are scenarios of one package, and a read of another spec's step is said so (docSteps).
	if IsMarkdown(strings.TrimSuffix(file, ".cue")) { // a document's specs, built as <doc>.md.cue
		errsBefore := len(l.errs.errs)
		l.stepsOf = map[string]map[string]Pos{}
		defer func() { l.otherSpecsSteps(errsBefore); l.stepsOf = nil }()
	}
	// (and the earlier package's files, once varReadsInst is this one)
	l.varReadsInst, l.varReads = inst, nil
	if l.combos == nil {
		// What the earlier packages' builds and decoding left is garbage now (their
		// scenarios are small): collected here, while little is live, this build does not
		// grow the heap on top of it. Under the CLI's heap floor nothing else would collect
		// it before this build's end (vet examples/ scenarios/: the full build of scenarios/
		// began over 18 MB of examples/' garbage, 2 MB live: a peak heap of 66 MB and RSS of
		// 106 MB without this, 51 and 98.5 with it). Only garbage worth the cycle's marking
		// (garbageWorthCollecting): vet of docs/ after scenarios/ holds 17-20 MB live and
		// builds each document in a few MB; collecting before each made 29 cycles instead
		// of 21. Not before a load's first build (what is there is not this load's: the
		// editor's process, loading on every change), nor before a combination's (small,
		// and sharing one context with the others).
		if l.built {
			collectBeforeBuild()
		}
		l.built = true
	}
	if buildStartHook != nil {
		buildStartHook()
	}
	l.buildFiles = openInst.Files
	defer func() { l.buildFiles = nil }()
	if cp := l.comboReads; cp != nil {
		// The whole package's, as the scenario's own load scans it, not the files kept.
		l.varReadsInst, l.varReads = cp.inst, cp.reads
	}
	newContext := cuecontext.New
	if l.combos != nil {
		newContext = func(...cuecontext.Option) *cue.Context { return l.combos.ctx } // the schema built once for every combination
	}
	// A run's package that is clean step by step (cleanShallow) is never built against the
	// full schema, nor is a package of vet's that the by-kind build finds clean or with errors
	// outside steps only (cleanByKind); any other package is, for its errors.
	var v cue.Value
	var top []cue.Selector // the package's top-level fields, as a clean build found them
	happy := false
	if l.opts.ForRun && l.combos == nil {
		top, happy = l.cleanShallow(inst)
	}
	if happy {
		l.res.shallowClean++
	} else {
		verdict := byKindUnknown
		// A sweep's combination of vet's too, with the by-kind schema built once for all of
		// them in the combinations' context (Combinations.byKind): examples/' 15 were built
		// in 2.2 ms each against the full schema, 1.1 ms by kind (profiles of 20 vets).
		if !l.opts.ForRun && !l.opts.fullCheck {
			v, top, verdict = l.cleanByKind(inst)
		}
		switch verdict {
		case byKindClean:
			happy = true
			l.res.byKindClean++
		case byKindErrors:
			l.res.byKindErrors++ // v is the by-kind build, whose errors are the full build's
		default:
			v = newContext().BuildInstance(inst)
			top, happy = l.cleanTop(v, nil, nil)
		}
	}
	if happy && l.combos == nil {
		v = cue.Value{}
		// Collect it now, while little else is live: the collection marks only the loader's
		// results, and the open copy does not grow the heap on top of the dead build (vet of
		// 300 files: 100-140 MB RSS without this). The CLI loads with a heap floor
		// (internal/gcfloor), under which the pacer would collect only once the open copy is
		// being built, marking it too. Under the pacer alone (GOGC set), a collection here
		// makes the next one come sooner; it is skipped when the dead build is small beside
		// what is live (garbageWorthCollecting): once scenarios/ is decoded, vet of
		// examples/ scenarios/ docs/ holds 17-20 MB live and collected after each small
		// document's build (24 cycles; 10 with the rule, 1.11-1.23 s of CPU instead of
		// 1.60-1.83, peak RSS 114 MB instead of 101).
		heap, ok := heapObjects()
		live, liveOK := liveHeap()
		if !ok || !liveOK || garbageWorthCollecting(heap, live) { // unknown: collect, as before
			runtime.GC()
		}
	}
	if builtHook != nil {
		builtHook(openInst)
	}
	ov := newContext().BuildInstance(openInst)
	l.refs = newRefMemo(openInst.Files)
	defer func() { l.refs = nil }()
	if err := ov.Err(); err != nil {
		// An error without the schema is the user's own CUE error (a conflict, a reference
		// to nothing): report it as CUE says, unless it is the schema imported for nothing
		// because the scenarios forgot it (one mistake, said in its terms).
		if !l.forgotScenario(err, inst.Files, only) {
			l.addCUEError(withoutUnusedSchema(err))
		}
		return
	}
	fields, err := topFields(ov, top)
	if err != nil {
		l.addCUEError(err)
		return
	}
	l.checkKitHiddenParams(inst.Files)
	found, failed := 0, 0
	scenarios := map[string]bool{}
	var hideAll bool
	var hidesIn map[string]bool
	if happy {
		hideAll, hidesIn = hiddenSchemaFields(inst.Files) // checkHiddenFields' only findings, once per package
		// A helper of an imported package (a kit's step template with _timeout) may reach any
		// scenario that reads the package: it was missed where this package wrote none.
		hideAll = hideAll || importsHideSchemaField(inst)
	}
	for _, f := range fields {
		// The scenario is called what its label says: "s6-overflow", not the quoted label
		// (the file's scenarios, --scenario and run ids read it so).
		name := f.sel.Unquoted()
		sv := f.v
		if !sv.LookupPath(scenarioMarker).Exists() {
			// A value that fails to evaluate is no scenario, but it is an error that
			// Validate does not always return (a selector of the schema that does not
			// exist: schema.#scenario).
			if err := sv.Err(); err != nil && (only == nil || only[name]) {
				l.addCUEError(err)
				failed++
			} else if (only == nil || only[name]) && sv.IncompleteKind() == cue.StructKind && sv.LookupPath(cue.MakePath(cue.Str("steps"))).Exists() {
				l.notScenario(name, l.valuePos(sv))
				failed++ // reported: "no scenario declared" would say it again
			} else if only == nil || only[name] {
				failed += l.nestedScenarios(name, sv)
			}
			continue
		}
		scenarios[name], scenarios[f.sel.String()] = true, true // CUE's error paths quote the label
		if only != nil && !only[name] {
			continue
		}
		found++
		l.setStage(l.stagePos(), "decoding scenario %s", name)
		if happy {
			before := len(l.errs.errs)
			if hideAll || hidesIn[name] {
				l.checkFields(sv, l.schema().LookupPath(cue.ParsePath("#Scenario")), []string{name})
			}
			l.decodeScenario(name, sv, before)
			continue
		}
		l.scenario(name, v.LookupPath(cue.MakePath(f.sel)), sv)
	}
	// Errors of the instance outside every scenario (kits) still matter.
	if !happy {
		for _, e := range cueerrors.Errors(v.Validate()) {
			if p := e.Path(); len(p) > 0 && scenarios[p[0]] {
				continue
			}
			l.addCUEError(e)
		}
	}
	pkg := ""
	if inst.PkgName != "" && inst.PkgName != "_" {
		pkg = inst.Dir + "\x00" + inst.PkgName
	}
	l.noScenario(found+failed, file, pkg)
}

// notScenario reports a top-level value that has steps but is not a #Scenario: it would never
// run, and nothing would say so.
func (l *loader) notScenario(name string, pos Pos) {
	l.errs.add(pos, name, "a value with steps that is not a #Scenario never runs: expected `%s: schema.#Scenario & {...}` (with `import \"labrun.dev/schema\"`)", name)
}

// nestedScenarios reports the scenarios declared anywhere inside the top-level value v (named
// name), in structs and lists at any depth: only top-level fields are scenarios, so they would
// never run. Hidden fields and definitions (_s, #s) are not looked into: they are where kits
// keep templates. It returns how many it reported.
func (l *loader) nestedScenarios(name string, v cue.Value) int {
	return l.scenariosBelow(name, name, v)
}

// scenariosBelow reports the scenarios among the regular fields and elements of v, whose
// dotted path (as errors name it) is path; label is the innermost field label at or above v,
// the name the message suggests for a scenario in a list.
func (l *loader) scenariosBelow(path, label string, v cue.Value) int {
	type child struct {
		path, label string
		v           cue.Value
	}
	var children []child
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return 0
		}
		for it.Next() {
			sel := it.Selector()
			children = append(children, child{path + "." + sel.String(), sel.String(), it.Value()})
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return 0
		}
		for i := 0; it.Next(); i++ {
			children = append(children, child{fmt.Sprintf("%s.%d", path, i), label, it.Value()})
		}
	default:
		return 0
	}
	n := 0
	for _, c := range children {
		if c.v.IncompleteKind() == cue.StructKind && c.v.LookupPath(scenarioMarker).Exists() {
			l.errs.add(l.valuePos(c.v), c.path, "a scenario inside %s never runs: only top-level fields are scenarios; declare it at the top level, e.g. `%s: schema.#Scenario & {...}`", path, c.label)
			n++
			continue
		}
		n += l.scenariosBelow(c.path, c.label, c.v)
	}
	return n
}

// forgotScenario reports the values of files that look like scenarios (a struct with steps)
// when err is only the schema imported and not used, and says whether it found any. (With
// other errors, e.g. #Scenario written without schema., those are the mistake.)
func (l *loader) forgotScenario(err error, files []*ast.File, only map[string]bool) bool {
	unused := false
	for _, e := range cueerrors.Errors(err) {
		if !unusedSchema(e) {
			return false
		}
		unused = true
	}
	if !unused {
		return false
	}
	found := false
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.Field)
			if !ok {
				continue
			}
			name, _, err := ast.LabelName(fd.Label)
			if err != nil || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_") || (only != nil && !only[name]) {
				continue
			}
			if hasStepsField(fd.Value) {
				l.notScenario(name, l.pos(fd.Pos()))
				found = true
			}
		}
	}
	return found
}

// withoutUnusedSchema is err without "imported and not used" of the schema when err holds
// other errors: the schema is unused because of them (#Scenario written without schema.).
func withoutUnusedSchema(err error) error {
	var kept cueerrors.Error
	dropped := false
	for _, e := range cueerrors.Errors(err) {
		if unusedSchema(e) {
			dropped = true
			continue
		}
		kept = cueerrors.Append(kept, e)
	}
	if kept == nil || !dropped {
		return err
	}
	return kept
}

// unusedSchema reports whether e is CUE's "imported and not used" of the schema.
func unusedSchema(e cueerrors.Error) bool {
	format, args := e.Msg()
	return strings.HasPrefix(fmt.Sprintf(format, args...), "imported and not used: \""+schema.ImportPath+"\"")
}

// hasStepsField reports whether x is a struct literal with a steps field, or a unification
// with one.
func hasStepsField(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.StructLit:
		for _, el := range x.Elts {
			if fd, ok := el.(*ast.Field); ok {
				if name, _, err := ast.LabelName(fd.Label); err == nil && name == "steps" {
					return true
				}
			}
		}
	case *ast.BinaryExpr:
		return hasStepsField(x.X) || hasStepsField(x.Y)
	case *ast.ParenExpr:
		return hasStepsField(x.X)
	}
	return false
}

// noScenario reports a named file that declares no scenario. A file of a package (pkg: its
// directory and name) is reported once the load is done (noScenarioLeft), and only if no file
// of that package named on the command line declares one: a shell glob over a package's files
// names its kit too (labrun vet examples/istio-tasks/*.cue), which is no mistake; naming only
// the kit is.
func (l *loader) noScenario(found int, file, pkg string) {
	if pkg != "" {
		if l.pkgFound == nil {
			l.pkgFound = map[string]int{}
		}
		l.pkgFound[pkg] += found
		if found == 0 && file != "" {
			l.noScenarioFiles = append(l.noScenarioFiles, [2]string{file, pkg})
		}
		return
	}
	if found == 0 && file != "" {
		l.noScenarioError(file)
	}
}

// noScenarioLeft reports the named files that declare no scenario, of packages none of whose
// named files (or directories) declares one.
func (l *loader) noScenarioLeft() {
	for _, f := range l.noScenarioFiles {
		if l.pkgFound[f[1]] == 0 {
			l.noScenarioError(f[0])
		}
	}
	l.noScenarioFiles = nil
}

func (l *loader) noScenarioError(file string) {
	pos := Pos{File: l.userFile(file), Line: 1, Col: 1}
	l.errs.add(pos, "", "%s: expected a top-level field such as `s1: schema.#Scenario & {...}` (with `import \"labrun.dev/schema\"`)", NoScenarioInFile)
}

// NoScenarioInFile begins the problem of a file named to be checked that declares no
// scenario (a package's kit is no mistake in a directory, or with the package's other files).
const NoScenarioInFile = "no scenario declared in this file"

// userFile maps an overlay file name back to the user's document.
func (l *loader) userFile(name string) string {
	if doc, ok := l.virtual[name]; ok {
		return doc
	}
	return name
}

func (l *loader) String() string { return fmt.Sprintf("loader(%d scenarios)", len(l.res.Scenarios)) }

// Schema is the embedded schema compiled on its own in ctx: its definitions and their doc
// comments, for editors.
func Schema(ctx *cue.Context) cue.Value { return schemaValue(ctx) }

// schemaValue compiles the embedded schema on its own, for looking up definitions.
func schemaValue(ctx *cue.Context) cue.Value {
	var src strings.Builder
	entries, _ := schema.Files.ReadDir(".")
	for i, e := range entries {
		b, _ := schema.Files.ReadFile(e.Name())
		s := string(b)
		if i > 0 {
			s = strings.Replace(s, "package schema", "", 1)
		}
		src.WriteString(s)
		src.WriteByte('\n')
	}
	return ctx.CompileString(src.String(), cue.Filename("labrun-schema.cue"))
}

// specStepReadRE finds the name of a step an expression reads that its scenario does not have.
var specStepReadRE = regexp.MustCompile(`unknown name ([A-Za-z_][A-Za-z0-9_]*)|: no step named "([^"]+)"`)

// otherSpecsSteps adds, to each error since the error count was before in a Markdown document
// that reads a step its spec does not have, which other spec of the document has that step:
// the specs of a document are scenarios of their own, and share no steps. Before, a spec that
// read a step of the spec above it said only "unknown name warm".
func (l *loader) otherSpecsSteps(before int) {
	if len(l.stepsOf) < 2 {
		return
	}
	for _, e := range l.errs.errs[before:] {
		if !IsMarkdown(e.Pos.File) {
			continue
		}
		m := specStepReadRE.FindStringSubmatchIndex(e.Msg)
		if m == nil {
			continue
		}
		step := ""
		if m[2] >= 0 {
			step = e.Msg[m[2]:m[3]]
		} else {
			step = e.Msg[m[4]:m[5]]
		}
		spec, _, _ := strings.Cut(e.Path, ".")
		if _, own := l.stepsOf[spec][step]; own {
			continue
		}
		var owners []string
		for name, steps := range l.stepsOf {
			if p, ok := steps[step]; ok && name != spec {
				owners = append(owners, fmt.Sprintf("%s (line %d)", name, p.Line))
			}
		}
		if len(owners) == 0 {
			continue
		}
		sort.Strings(owners)
		e.Msg = e.Msg[:m[1]] + fmt.Sprintf(" (%s is a step of spec %s of this document: its specs do not share steps, each is a scenario of its own and runs alone; read %s in that spec, or give spec %s a step of its own)", step, strings.Join(owners, ", spec "), step, spec) + e.Msg[m[1]:]
	}
}
