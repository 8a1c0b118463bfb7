package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"labrun.dev/labrun/schema"
)

// WaitObjects polls until an object matches w.Want (see matchPartial), or with w.Absent until
// none does. The objects compared are the named one, or those the wanted labels select, or
// every object of the kind in the namespace. On timeout the error shows, for a match, the
// closest object's differences (field, wanted, got), and for an absence the objects still there.
// When the partial object has status fields, an object whose controller has not yet observed its
// current generation is not judged: it neither matches nor is absent (see unobserved). With
// w.Once it judges once (see schema.ObjectWait).
func (d *driver) WaitObjects(ctx context.Context, namespace string, w schema.ObjectWait, interval time.Duration) error {
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	want := normalize(w.Want)
	wm, _ := want.(map[string]any)
	kind, _ := wm["kind"].(string)
	apiVersion, _ := wm["apiVersion"].(string)
	md, _ := wm["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		namespace = ns
	}
	set := labels.Set{}
	if lm, ok := md["labels"].(map[string]any); ok {
		for k, v := range lm {
			set[k] = fmt.Sprint(v)
		}
	}
	// apiVersion without its version matches what discovery found, whatever was asked for.
	delete(wm, "apiVersion")
	// Status fields are judged only once the object's controller has written its status for
	// the object's current generation (see unobserved): right after an apply, the old status
	// (or none) would match or differ for nothing.
	statusWanted := wantsStatus(wm)
	op := "match"
	if w.Absent {
		op = "absent"
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	var last string
	// observed: the last poll read the objects (its verdict is about the system under test,
	// not an error reaching it).
	observed := false
	// custom: the kind is a custom resource, its CRD read once (see matchObject); asked: that
	// was done. A CRD that cannot be read leaves it false.
	custom, asked := false, false
	describe := func(kind, ns string) string {
		switch {
		case name != "":
			return kindName(kind, ns, name)
		case len(set) > 0:
			return kindName(kind, ns, "{"+set.String()+"}")
		case ns != "":
			return kind + " in " + ns
		}
		return kind
	}
	what := describe(kind, "")
	judge := func(ctx context.Context) (bool, error) {
		m, err := d.mappingFor(ctx, kind, apiVersion)
		if err != nil {
			if !isDeadline(err) {
				last, observed = err.Error(), false
			}
			return false, nil
		}
		ns := ""
		if m.namespaced {
			ns = d.ns(namespace)
		}
		what = describe(m.kind, ns)
		if !asked {
			_, sch, err := d.ObjectSchema(ctx, kind, apiVersion)
			custom, asked = err == nil && sch != nil, err == nil || !isDeadline(err)
		}
		objs, err := d.getObjects(ctx, d.resourceFor(m.gvr, m.namespaced, ns), name, set.String())
		if apierrors.IsNotFound(err) {
			objs, err = nil, nil
		}
		if err != nil {
			if isBadSelector(err) {
				return false, err
			}
			if !isDeadline(err) {
				last, observed = err.Error(), false
			}
			return false, nil
		}
		observed = true
		var matching []string
		// pending: objects whose status fields are wanted and whose status is not yet about
		// their current generation; they neither match nor differ yet.
		var pending []string
		best, bestName := []fieldDiff(nil), ""
		for _, o := range objs {
			if statusWanted {
				if no := unobserved(o.Object); no != nil {
					pending = append(pending, o.GetName()+": "+no.Error())
					continue
				}
			}
			diffs := matchObject(wm, o.Object, w.AnyOrder, custom)
			if len(diffs) == 0 {
				matching = append(matching, o.GetName())
				continue
			}
			if bestName == "" || distance(diffs) < distance(best) {
				best, bestName = diffs, o.GetName()
			}
		}
		if w.Absent {
			if len(matching)+len(pending) == 0 {
				return true, nil
			}
			if len(matching) == 0 {
				last = "not yet judged: " + strings.Join(pending, "; ")
				return false, nil
			}
			last = "still there: " + strings.Join(matching, ", ") + stateOf(objs, matching)
			return false, nil
		}
		if len(matching) > 0 {
			return true, nil
		}
		switch {
		case len(pending) > 0 && bestName == "":
			last = strings.Join(pending, "; ")
		case len(objs) == 0 && name != "":
			last = "it does not exist"
		case len(objs) == 0:
			last = "no object of the kind exists there"
		case name != "":
			last = "it differs: " + describeDiffs(best, 8)
		default:
			last = fmt.Sprintf("none of %d matches; the closest, %s, differs: %s", len(objs), bestName, describeDiffs(best, 8))
		}
		return false, nil
	}
	if w.Once {
		held, err := judge(ctx)
		switch {
		case err != nil:
			return fmt.Errorf("wait %s %s: %w", op, what, err)
		case held:
			return nil
		case !observed:
			return fmt.Errorf("wait %s %s: %s", op, what, last)
		}
		return &schema.Unmet{Err: fmt.Errorf("wait %s %s: %s", op, what, last)}
	}
	err := poll(ctx, interval, judge)
	if err != nil {
		err = fmt.Errorf("wait %s %s: %s: %w", op, what, last, err)
		if observed && ctx.Err() != nil {
			return &schema.Unmet{Err: err}
		}
		return err
	}
	return nil
}

// stateOf says, for an absence, which of the objects still there are being deleted.
func stateOf(objs []unstructured.Unstructured, names []string) string {
	var deleting []string
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil && slices.Contains(names, o.GetName()) {
			deleting = append(deleting, o.GetName()+" ("+deletionState(&o)+")")
		}
	}
	if len(deleting) == 0 {
		return ""
	}
	sort.Strings(deleting)
	return "; being deleted: " + strings.Join(deleting, ", ")
}

// distance ranks how far an object is from a match: a field it lacks counts more than a field
// it has with another value, so the closest object is the one that has the fields.
func distance(diffs []fieldDiff) int {
	n := 0
	for _, d := range diffs {
		n++
		if d.got == "no field" {
			n++
		}
	}
	return n
}
