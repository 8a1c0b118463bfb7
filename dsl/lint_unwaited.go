package dsl

import (
	"fmt"
	"strings"

	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/schema"
)

// lintConfigUnwaited warns of a config step, with neither reflects nor until, that reads a
// proxy's config after a step that applies or deletes Istio configuration (LintConfigUnwaited)
// when nothing that waits for istiod's push has ended between them: a config step with
// reflects or until, or a repeat with until around a config step. istiod pushes a little
// after an apply: the read may be of the config from before it, and a claim that held there
// (a cluster kept, a route unchanged, a field at its old value) passes whatever the object
// does.
func (d *decoder) lintConfigUnwaited(warn func(s *Step, field, code, format string, args ...any)) {
	if d.target() != "kube" {
		return
	}
	var changes []configChange
	var waits, sleeps []*Step
	holdsConfig := func(s *Step) bool {
		found := false
		Walk(s.Children, func(c *Step) { _, ok := c.Params.(*schema.Config); found = found || ok })
		return found
	}
	for _, s := range d.order {
		if s.Phase != PhaseSetup && s.Phase != PhaseSteps {
			continue
		}
		changes = append(changes, d.configChanges(s)...)
		switch p := s.Params.(type) {
		case *schema.Sleep:
			sleeps = append(sleeps, s)
		case *schema.Repeat:
			if p.Until != "" && holdsConfig(s) {
				waits = append(waits, s)
			}
		case *schema.Config:
			if p.Reflects != nil || p.Until != "" {
				waits = append(waits, s)
				continue
			}
			if p.Admin != "" || d.inRepeatUntil(s) {
				continue
			}
			var unwaited []configChange
			for _, c := range changes {
				if !d.endedBefore(c.step, s) {
					continue
				}
				waited := false
				for _, w := range waits {
					if d.endedBefore(c.step, w) && d.endedBefore(w, s) {
						waited = true
						break
					}
				}
				if !waited {
					unwaited = append(unwaited, c)
				}
			}
			if len(unwaited) == 0 {
				continue
			}
			last := unwaited[len(unwaited)-1]
			what := last.what
			if n := len(unwaited) - 1; n > 0 {
				what += fmt.Sprintf(" (and %d more object%s before it)", n, map[bool]string{true: "s"}[n > 1])
			}
			how := "until: a claim about the change itself, which the step reads again until it holds (istiod marks no " + last.kind + " like this one in Envoy's config)"
			if last.marked {
				how = "reflects: the object (the step reads again until the config carries istiod's mark of it), or until: a claim about the change itself"
			}
			// A sleep between them is a guess at how long the push takes, not a wait for it:
			// a busy istiod pushes later. Said, as the user may think it waits.
			slept := ""
			for _, z := range sleeps {
				if d.endedBefore(last.step, z) && d.endedBefore(z, s) {
					slept = fmt.Sprintf(" (the sleep %s (%s) between them is a guess at how long the push takes, not a wait for it: a busy istiod pushes later)", z.Shown, z.Pos.Rel(d.sc.Dir))
				}
			}
			warn(s, "", LintConfigUnwaited, "%s reads the proxy's config after %s %s (%s) changes %s, with neither reflects nor until, and no step waits for istiod's push between them%s: istiod pushes a little after a change, so the read may be of the config from before it, and a claim that held there (a cluster kept, a field at its old value) passes whatever the change does; wait for the push with %s",
				s.Shown, last.step.Kind, last.step.Shown, last.step.Pos.Rel(d.sc.Dir), what, slept, how)
			// Warned once: the later reads are judged against the changes after this one.
			changes = nil
		}
	}
}

// configChange is a change of Istio configuration a step makes: istiod pushes it to the
// proxies a little after the step.
type configChange struct {
	step *Step
	what string // "DestinationRule lab/backend"
	kind string
	// marked: istiod marks the object in the config it pushes (reflects can wait for it).
	marked bool
	// obj is the object applied or deleted (nil for a delete by kind).
	obj schema.Object
}

// configChanges are the changes of Istio configuration (pushesConfig) that s, an apply or a
// delete, makes: each object, or a delete by kind.
func (d *decoder) configChanges(s *Step) []configChange {
	var objs []schema.FileObject
	var ns string // the step's namespace, for objects that name none
	var changes []configChange
	switch p := s.Params.(type) {
	case *schema.Apply:
		objs, ns = append(inline(p.Objects), d.stepFileObjects(p.Files)...), p.Namespace
	case *schema.Delete:
		objs, ns = append(inline(p.Objects), d.stepFileObjects(p.Files)...), p.Namespace
		if pushesConfig(p.Kind, p.APIVersion) {
			changes = append(changes, configChange{s, "every " + p.Kind + " it finds", p.Kind, false, nil})
		}
	}
	for _, fo := range objs {
		o := fo.Object
		kind, _ := o["kind"].(string)
		av, _ := o["apiVersion"].(string)
		if !pushesConfig(kind, av) {
			continue
		}
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		objNS, _ := md["namespace"].(string)
		what := kind + " " + d.defaultNamespace(or(objNS, ns)) + "/" + name
		if fo.Source != "" {
			what += " (" + fo.Source + ")"
		}
		changes = append(changes, configChange{s, what, kind, xdstype.MarksObject(kind, o["spec"]), o})
	}
	return changes
}

// inline are a step's own objects, as file objects from nowhere (no Source).
func inline(objs []schema.Object) []schema.FileObject {
	out := make([]schema.FileObject, len(objs))
	for i, o := range objs {
		out[i] = schema.FileObject{Object: o}
	}
	return out
}

// inRepeatUntil reports whether a repeat with until holds the step: the repeat reads again
// until its claim holds, which waits for the push as until does.
func (d *decoder) inRepeatUntil(s *Step) bool {
	for p := d.parent[s]; p != nil; p = d.parent[p] {
		if r, ok := p.Params.(*schema.Repeat); ok && r.Until != "" {
			return true
		}
	}
	return false
}

// pushesConfig reports whether a change to objects of the kind (and apiVersion) is Istio
// configuration that istiod pushes to proxies: Istio's own kinds and the Gateway API's.
func pushesConfig(kind, apiVersion string) bool {
	if kind == "" {
		return false
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	if apiVersion == "" { // a delete by kind may leave it out
		return xdstype.Marked[kind] != nil || kind == "PeerAuthentication" || kind == "ServiceEntry"
	}
	return strings.HasSuffix(group, ".istio.io") || group == "gateway.networking.k8s.io"
}
