package dsl

import (
	"strconv"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"
)

// Combinations is shared by the loads of a sweep's combinations (Options.Combinations), which
// run and vet make after a load of the same files without those vars found no problem: each
// loads one scenario file again with the vars of one combination. Loaded alone, each would
// parse, build and check the whole package of the file, against the schema built anew; the
// repository's 15 combinations took 0.8 s of a 1.2 s vet. With Combinations they share:
//   - the package's parsed files: the vars are written into the syntax for one build and put
//     back after it;
//   - one CUE context, so that the schema, the by-kind schema (vet checks each combination
//     by kind, cleanByKind, as its scenario's load) and the open schema are built once;
//   - the scan of the file's siblings (scanSiblings);
//   - what the syntax says of which files a combination can change: only the scenario's file,
//     the files whose vars the combination rewrites, the files that refer to what those
//     declare (their values may change), and every file that any of these refers to are built.
//     Every other file evaluates as it did in the load that found no problem. A package whose
//     files declare top-level fields that the syntax does not name (embeddings,
//     comprehensions, patterns, dynamic labels) is built whole.
//
// A Combinations may be used by one load at a time (loads wait for each other).
type Combinations struct {
	mu   sync.Mutex
	ctx  *cue.Context
	pkgs map[string]*comboPackage
	// scanned are the siblings of each file loaded (scanSiblings).
	scanned map[string]*scanned
	// open are the open copies of the instances the packages import (openCopy).
	open map[*build.Instance]*build.Instance
	// byKind are the by-kind copies of the instances the packages import (cleanByKind): the
	// by-kind schema is parsed and built once for every combination, in ctx.
	byKind map[*build.Instance]*build.Instance
	// parsed are packages parsed by an earlier load (Reuse), by dir+"\x00"+package.
	parsed map[string]*build.Instance
}

// Reuse takes the parsed packages that res kept (Options.KeepSyntax), so that the
// combinations' loads do not parse them again; res lets them go. The load of res must have
// found no problem, and its vars (Options.Vars) must be among every combination's: a
// combination writes all its vars into the syntax.
func (c *Combinations) Reuse(res *Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parsed = res.syntax
	res.syntax = nil
}

// NewCombinations returns what the loads of one command's combinations share.
func NewCombinations() *Combinations {
	return &Combinations{ctx: cuecontext.New(), pkgs: map[string]*comboPackage{}, scanned: map[string]*scanned{},
		open: map[*build.Instance]*build.Instance{}, byKind: map[*build.Instance]*build.Instance{}}
}

// comboPackage is one package as the combinations load it.
type comboPackage struct {
	inst *build.Instance // nil: built whole by each load
	// labels are the top-level fields each file declares, refs the identifiers it uses.
	labels, refs []map[string]bool
	// declared and referenced index them: the files declaring, or naming, a field.
	declared, referenced map[string][]int
	// vars are each file's varsStructs.
	vars [][]*ast.StructLit
	// reads is what the whole package's CUE could read of its scenarios' vars: a
	// combination judges its swept vars read as its scenario's load does, over every file.
	reads *pkgVarReads
}

// scanned is what scanSiblings found next to a file: the same for each of its combinations.
type scanned struct {
	excluded []string
	skipped  Errors
}

// scanSiblings is l.scanSiblings, done once per file and package for the combinations.
func (c *Combinations) scanSiblings(l *loader, dir, abs, pkg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := abs + "\x00" + pkg
	if s, ok := c.scanned[key]; ok {
		for _, p := range s.excluded {
			if l.excluded == nil {
				l.excluded = map[string]bool{}
			}
			l.excluded[p] = true
		}
		l.res.Skipped = append(l.res.Skipped, s.skipped...)
		return
	}
	before, was := len(l.res.Skipped), len(l.excluded)
	l.scanSiblings(dir, abs, pkg)
	if was > 0 {
		return // not a fresh load: nothing to record
	}
	s := &scanned{skipped: append(Errors(nil), l.res.Skipped[before:]...)}
	for p := range l.excluded {
		s.excluded = append(s.excluded, p)
	}
	c.scanned[key] = s
}

// buildCombination builds, for a load with Options.Combinations, the package pkg of dir
// holding the file abs (a .cue file whose scenarios only names). It returns false when the
// package is to be built as any load builds it.
func (l *loader) buildCombination(dir, pkg string, only map[string]bool, abs string) bool {
	c := l.opts.Combinations
	c.mu.Lock()
	defer c.mu.Unlock()
	key := dir + "\x00" + pkg
	cp := c.pkgs[key]
	if cp == nil {
		cp = &comboPackage{}
		if inst := c.parsed[key]; inst != nil {
			cp.index(inst)
		} else if insts := load.Instances([]string{"."}, &load.Config{Dir: dir, Overlay: l.overlay(dir), Package: pkg}); len(insts) == 1 && insts[0].Err == nil {
			cp.index(insts[0])
		}
		c.pkgs[key] = cp
	}
	if cp.inst == nil {
		return false
	}
	target := -1
	for i, f := range cp.inst.Files {
		if f.Filename == abs {
			target = i
		}
	}
	if target < 0 {
		return false
	}
	what := "package " + pkg + " (for " + scenarioList(only) + ")"
	l.setStage(Pos{File: l.userFile(abs)}, "building %s", what)
	undo, touched := l.rewriteVarsIn(cp.inst.Files, cp.vars, true)
	defer undo()
	inst := *cp.inst
	inst.Files = nil
	keep := cp.closure(target, touched)
	for i, f := range cp.inst.Files {
		if keep[i] {
			inst.Files = append(inst.Files, f)
		}
	}
	l.combos = c
	l.comboReads = cp
	defer func() { l.combos, l.comboReads = nil, nil }()
	l.buildInstance(&inst, l.openCopy(&inst), only, abs)
	return true
}

// index reads what each file of inst declares and names; a file with a top-level
// declaration whose fields the syntax does not name leaves cp.inst nil.
func (cp *comboPackage) index(inst *build.Instance) {
	cp.declared = map[string][]int{}
	cp.referenced = map[string][]int{}
	for i, f := range inst.Files {
		labels := map[string]bool{}
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute, *ast.LetClause:
				// A let is the file's own: what it names counts among the file's refs.
			case *ast.Field:
				name, ok := staticLabel(x.Label)
				if !ok {
					return
				}
				labels[name] = true
			default:
				return // an embedding, a comprehension, ...: fields the syntax does not name
			}
		}
		refs := map[string]bool{}
		ast.Walk(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				refs[id.Name] = true
			}
			return true
		}, nil)
		cp.vars = append(cp.vars, varsStructs(f))
		cp.labels = append(cp.labels, labels)
		cp.refs = append(cp.refs, refs)
		for name := range labels {
			cp.declared[name] = append(cp.declared[name], i)
		}
		for name := range refs {
			cp.referenced[name] = append(cp.referenced[name], i)
		}
	}
	cp.inst = inst
}

// staticLabel is the name of a top-level field's label when the syntax names it.
func staticLabel(l ast.Label) (string, bool) {
	if a, ok := l.(*ast.Alias); ok {
		e, ok := a.Expr.(ast.Label)
		if !ok {
			return "", false
		}
		l = e
	}
	switch x := l.(type) {
	case *ast.Ident:
		return x.Name, true
	case *ast.BasicLit:
		if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING {
			return s, true
		}
	}
	return "", false
}

// closure says which files a combination builds: the file target, the files touched (whose
// vars it rewrites) and those whose values may change with them (they name a field that a
// changed file declares), and every file these name a field of.
func (cp *comboPackage) closure(target int, touched map[*ast.File]bool) []bool {
	changed := make([]bool, len(cp.inst.Files))
	var queue []int
	for i, f := range cp.inst.Files {
		if touched[f] {
			changed[i] = true
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for name := range cp.labels[i] {
			for _, j := range cp.referenced[name] {
				if !changed[j] {
					changed[j] = true
					queue = append(queue, j)
				}
			}
		}
	}
	keep := changed
	keep[target] = true
	for i := range keep {
		if keep[i] {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for name := range cp.refs[i] {
			for _, j := range cp.declared[name] {
				if !keep[j] {
					keep[j] = true
					queue = append(queue, j)
				}
			}
		}
	}
	return keep
}
