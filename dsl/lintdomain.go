package dsl

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// clusterLocal is the cluster domain most clusters have, and some do not.
const clusterLocal = ".svc.cluster.local"

// lintExprClusterDomain warns of a string literal of an expression that hard-codes the
// cluster domain cluster.local (a cluster's or a virtual host's name): where the domain differs
// no name has it, so a claim that it is absent ("!('outbound|8080||b.ns.svc.cluster.local' in
// clusters)") holds whatever the proxy has. The same literal in a step's cluster is warned of
// too (lint).
func (d *decoder) lintExprClusterDomain() {
	if d.target() != "kube" {
		return
	}
	if _, ok := d.sc.LintIgnore[LintClusterDomain]; ok {
		return
	}
	for _, e := range d.exprs() {
		if !strings.Contains(e.Src, clusterLocal) {
			continue
		}
		tree, err := parser.Parse(e.Src)
		if err != nil {
			continue
		}
		v := &clusterLocalStrings{}
		ast.Walk(&tree.Node, v)
		for _, s := range v.found {
			d.l.warnings = append(d.l.warnings, &Warning{Pos: exprPos(e.Pos, e.Src, s.Location().From), Code: LintClusterDomain, Scenario: d.sc.Name,
				Msg: fmt.Sprintf("in expression %q: %q hard-codes the cluster domain cluster.local; where the cluster's domain differs (seed 002 §7) no name has it, so a claim that it is absent holds whatever the proxy has (and one that it is there fails): build it with target.clusterDomain (labrun reads it from CoreDNS), e.g. %s", e.Src, s.Value, withClusterDomain(s.Value))})
		}
	}
}

// hardCodesClusterLocal says whether the step's string s (a cluster's name) writes the domain
// cluster.local in its literal text: outside its ${...}, which it may have ("backend.${ns.app}
// .svc.cluster.local" is as hard-coded as a plain name). A "$${" is a literal "${".
func hardCodesClusterLocal(s string) bool {
	if !strings.Contains(s, clusterLocal) {
		return false
	}
	// A ${...}'s value stands between the literals around it: they do not join. A ${ never
	// closed is text (the loader says so).
	segs, _ := templateSegments(s)
	var lit strings.Builder
	for _, seg := range segs {
		if seg.expr {
			lit.WriteByte(0)
			continue
		}
		lit.WriteString(seg.text)
	}
	return strings.Contains(lit.String(), clusterLocal)
}

// withClusterDomain is the expression that builds the name s with target.clusterDomain in
// place of cluster.local: ('outbound|8080||backend.lab.svc.' + target.clusterDomain).
func withClusterDomain(s string) string {
	i := strings.Index(s, clusterLocal)
	quote := func(x string) string {
		if strings.Contains(x, "'") {
			return fmt.Sprintf("%q", x)
		}
		return "'" + x + "'"
	}
	out := quote(s[:i+len(".svc.")]) + " + target.clusterDomain"
	if rest := s[i+len(clusterLocal):]; rest != "" {
		out += " + " + quote(rest)
	}
	return "(" + out + ")"
}

// clusterLocalStrings finds the string literals that hold cluster.local as a Service's domain.
type clusterLocalStrings struct{ found []*ast.StringNode }

func (v *clusterLocalStrings) Visit(node *ast.Node) {
	if s, ok := (*node).(*ast.StringNode); ok && strings.Contains(s.Value, clusterLocal) {
		v.found = append(v.found, s)
	}
}
