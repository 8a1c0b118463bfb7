package interp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// JudgeIstio judges, by the cluster's CRDs, the problems of Istio kinds that the scenario's
// load left to them (dsl.Scenario.IstioChecks): a field, a value, a kind or a version that
// Istio's CRDs of the release vet knows (kubeshape.IstioAPIVersion) refuse, and a newer Istio
// may serve. One the cluster's CRD serves is accepted; one it does not is a problem at the
// field, naming the CRD (and the Istio release its labels name); one the cluster cannot judge
// (no cluster, its CRD cannot be read, none serves the kind) is the problem vet says without a
// cluster. refused are the paths of the steps that have a problem: their objects need no dry
// run to be refused (one problem is said once).
func JudgeIstio(ctx context.Context, t *schema.Target, sc *dsl.Scenario) (problems []DryRunProblem, refused map[string]bool) {
	if len(sc.IstioChecks) == 0 {
		return nil, nil
	}
	type crd struct {
		shape         *kubeshape.Shape
		kind          string
		err           error
		name, release string
	}
	cache := map[string]*crd{}
	crdOf := func(cl schema.Cluster, cluster, kind, apiVersion string) *crd {
		key := cluster + " " + apiVersion + " " + kind
		if c, ok := cache[key]; ok {
			return c
		}
		c := &crd{kind: kind}
		cache[key] = c
		os, ok := cl.(schema.ObjectSchemas)
		if !ok {
			return c
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		name, sch, err := os.ObjectSchema(cctx, kind, apiVersion)
		if name != "" {
			c.kind = name
		}
		c.err = err
		if err == nil && sch != nil {
			c.shape = kubeshape.FromCRD(sch)
			if src, ok := cl.(schema.CRDSources); ok {
				c.name, c.release = src.CRDSource(cctx, kind, apiVersion)
			}
		}
		return c
	}
	refused = map[string]bool{}
	for _, ic := range sc.IstioChecks {
		cluster := sc.ClusterOf(ic.Step)
		cl := t.Cluster
		if ct := t.Clusters[cluster]; ct != nil && ct.Cluster != nil {
			cl = ct.Cluster // each step is judged by the cluster it runs on
		}
		refuse := func(msg string) {
			if cluster != "" {
				msg = "cluster " + cluster + ": " + msg
			}
			problems = append(problems, DryRunProblem{Pos: ic.Pos, Msg: msg, Whole: true})
			refused[ic.Step.Path] = true
		}
		if cl == nil {
			refuse(ic.Msg + " (no cluster to judge it by)")
			continue
		}
		c := crdOf(cl, cluster, ic.Kind, ic.APIVersion)
		switch {
		case ic.Object == nil && c.err != nil:
			// The kube driver cannot map a kind the cluster does not serve.
			refuse(fmt.Sprintf("%s; nor does the cluster serve it by a CRD it lets be read (%v)", ic.Msg, c.err))
			continue
		case c.err != nil:
			refuse(fmt.Sprintf("%s; the cluster's CRD of %s could not be read to judge it: %v", ic.Msg, ic.Kind, c.err))
			continue
		case c.shape == nil && ic.Object == nil:
			refuse(ic.Msg + "; nor does the cluster serve it by a CRD")
			continue
		case c.shape == nil:
			refuse(ic.Msg + "; the cluster has no CRD of it to judge it by")
			continue
		case ic.Object == nil:
			continue // the cluster serves the kind in that version
		}
		var miss *kubeshape.Miss
		var at []string
		check := c.shape.CheckObject
		if ic.Partial {
			check = c.shape.Check // a wait's file's object, matched
		}
		check(map[string]any(ic.Object), func(path []string, m *kubeshape.Miss) {
			if miss == nil && len(path) <= len(ic.Path) && slices.Equal(path, ic.Path[:len(path)]) {
				miss, at = m, path
			}
		})
		if miss == nil {
			continue // the cluster's CRD has it
		}
		subject := c.kind
		if miss.At > 0 {
			subject += " " + strings.Join(at[:miss.At], ".")
		}
		refuse(fmt.Sprintf("%s%s (%s) %s", ic.Prefix, subject, crdFrom(c.kind, c.name, c.release), miss.Msg))
	}
	return problems, refused
}

// crdFrom says which CRD of the cluster judged a kind: "the cluster's CRD
// destinationrules.networking.istio.io, of Istio 1.31.0 by its labels".
func crdFrom(kind, name, release string) string {
	if name == "" {
		name = "of " + kind
	}
	s := "the cluster's CRD " + name
	if release != "" {
		s += ", of Istio " + release + " by its labels"
	}
	return s
}
