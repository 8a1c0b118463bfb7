package dsl

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"labrun.dev/labrun/schema"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// lintExprClusters warns, in a scenario of several clusters, of two mistakes of an expression
// that the step fields' lints do not see (probe p30 #5):
//   - a hand-written difference of two snapshots taken in two clusters (w2.x - e1.x): the same
//     selector in two clusters is two Envoys, and delta("e1", "w2") is refused for that reason;
//     written by hand it passed (code cross-cluster-difference);
//   - ${target.clusterDomain} (the first cluster's domain) read with results of steps of
//     another cluster only ("'x.svc.' + target.clusterDomain in west_eds"): that cluster's
//     Envoys name their clusters with its own domain (code cluster-domain).
func (d *decoder) lintExprClusters() {
	sc := d.sc
	if len(sc.Clusters) < 2 || d.target() != "kube" {
		return
	}
	_, ignoreDiff := sc.LintIgnore[LintCrossClusterDiff]
	_, ignoreDomain := sc.LintIgnore[LintClusterDomain]
	exprs := append([]*Expr{}, sc.Expect...)
	for _, s := range d.order {
		if s.Expr != nil {
			exprs = append(exprs, s.Expr)
		}
	}
	for _, e := range exprs {
		tree, err := parser.Parse(e.Src)
		if err != nil {
			continue
		}
		v := &clusterReads{d: d}
		ast.Walk(&tree.Node, v)
		if !ignoreDiff {
			for _, diff := range v.diffs {
				a, b := sc.names[diff.left], sc.names[diff.right]
				d.l.warnings = append(d.l.warnings, &Warning{Pos: exprPos(e.Pos, e.Src, diff.col), Code: LintCrossClusterDiff, Scenario: sc.Name,
					Msg: fmt.Sprintf("in expression %q: %s subtracts snapshot %s, taken in cluster %s, from snapshot %s, taken in cluster %s: the same selector in two clusters is two Envoys, whose counters started apart, so the difference is no count of what happened between them (delta(%q, %q) is refused for that reason); take both snapshots in one cluster, or write deltaAcross(%q, %q).<stat> to say you mean two Envoys",
						e.Src, diff.src, diff.right, sc.ClusterOf(b), diff.left, sc.ClusterOf(a), diff.right, diff.left, diff.right, diff.left)})
			}
		}
		if ignoreDomain || v.domainCol < 0 {
			continue
		}
		var clusters []string
		for _, name := range v.steps {
			if c := sc.ClusterOf(sc.names[name]); !slices.Contains(clusters, c) {
				clusters = append(clusters, c)
			}
		}
		if len(clusters) == 1 && clusters[0] != sc.DefaultCluster() {
			c := clusters[0]
			sort.Strings(v.steps)
			d.l.warnings = append(d.l.warnings, &Warning{Pos: exprPos(e.Pos, e.Src, v.domainCol), Code: LintClusterDomain, Scenario: sc.Name,
				Msg: fmt.Sprintf("in expression %q: target.clusterDomain is the domain of cluster %s (the first), and the expression reads only results of cluster %s (%s), whose Envoys name their clusters with cluster %s's domain: where the two differ no name there has it; write target.clusters.%s.clusterDomain",
					e.Src, sc.DefaultCluster(), c, strings.Join(v.steps, ", "), c, c)})
		}
	}
}

// clusterReads collects, from an expression's tree, the differences of two snapshots of two
// clusters, the steps whose results it reads, and where it reads target.clusterDomain.
type clusterReads struct {
	d         *decoder
	diffs     []snapshotDiff
	steps     []string
	domainCol int
	started   bool
}

type snapshotDiff struct {
	left, right, src string
	col              int
}

func (v *clusterReads) Visit(node *ast.Node) {
	if !v.started {
		v.started, v.domainCol = true, -1
	}
	sc := v.d.sc
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if s := sc.names[n.Value]; s != nil && !slices.Contains(v.steps, n.Value) {
			v.steps = append(v.steps, n.Value)
		}
	case *ast.MemberNode:
		if id, ok := n.Node.(*ast.IdentifierNode); ok && id.Value == "target" {
			if p, ok := n.Property.(*ast.StringNode); ok && p.Value == "clusterDomain" && v.domainCol < 0 {
				v.domainCol = n.Location().From
			}
		}
	case *ast.BinaryNode:
		if n.Operator != "-" {
			return
		}
		l, r := rootName(n.Left), rootName(n.Right)
		a, b := sc.names[l], sc.names[r]
		if a == nil || b == nil || a.Kind != "snapshot" || b.Kind != "snapshot" || l == r {
			return
		}
		if sc.ClusterOf(a) != sc.ClusterOf(b) && statPath(n.Left) == statPath(n.Right) {
			v.diffs = append(v.diffs, snapshotDiff{left: l, right: r, src: n.Left.String() + " - " + n.Right.String(), col: n.Location().From})
		}
	}
}

// rootName is the identifier a chain of member reads starts from (w2 of w2.upstream_rq_total).
func rootName(n ast.Node) string {
	for {
		switch x := n.(type) {
		case *ast.MemberNode:
			n = x.Node
		case *ast.IdentifierNode:
			return x.Value
		default:
			return ""
		}
	}
}

// statPath is what a chain of member reads reads below its root (upstream_rq_total).
func statPath(n ast.Node) string {
	var parts []string
	for {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			break
		}
		parts = append(parts, m.Property.String())
		n = m.Node
	}
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}

// lintHostContext warns, in a scenario of several clusters, of a command on this machine (an
// exec without a pod, a process) that runs kubectl, istioctl or helm and names no context: it
// gets the step's cluster only in its environment ($LABRUN_CONTEXT; $KUBECONFIG is the one
// kubeconfig of every cluster), so it reaches the kubeconfig's current context.
// {cluster: "west", exec: argv: ["kubectl", "get", "pods", "-l", "app=web", "-o", "name"]}
// listed east's pods, and "none left in west" held whatever happened there. A step of the
// first cluster with its context left empty (the current one), and a command given its own
// KUBECONFIG (env:), are not warned of.
func (d *decoder) lintHostContext(warn func(s *Step, field, code, format string, args ...any)) {
	sc := d.sc
	if len(sc.Clusters) < 2 || d.target() != "kube" {
		return
	}
	for _, s := range d.order {
		var words []string
		switch p := s.Params.(type) {
		case *schema.Exec:
			if p.InPod() || p.Env["KUBECONFIG"] != "" {
				continue
			}
			words = append(slices.Clone(p.Argv), p.Stdin)
		case *schema.Process:
			if p.Env["KUBECONFIG"] != "" {
				continue
			}
			words = p.Argv
		default:
			continue
		}
		c := sc.ClusterOf(s)
		if c == sc.DefaultCluster() && sc.Clusters[0].Context == "" {
			continue
		}
		text := strings.Join(words, " ")
		if slices.ContainsFunc([]string{"--context", "--kube-context", "--kubeconfig", "LABRUN_CONTEXT"}, func(named string) bool { return strings.Contains(text, named) }) {
			continue
		}
		tool := ""
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(" \t\n;|&()'\"`", r) }) {
			if b := path.Base(w); b == "kubectl" || b == "istioctl" || b == "helm" {
				tool = b
				break
			}
		}
		if tool == "" {
			continue
		}
		flag := "--context"
		if tool == "helm" {
			flag = "--kube-context"
		}
		warn(s, "argv", LintHostContext, "%s runs on this machine and names no context: it reaches the kubeconfig's current context, not the step's cluster %s, whose context it gets only in $LABRUN_CONTEXT; write %s %s \"$LABRUN_CONTEXT\" in a shell, or %q, \"${target.clusters.%s.context}\" in argv",
			tool, c, tool, flag, flag, c)
	}
}
