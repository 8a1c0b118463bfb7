package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"labrun.dev/labrun/schema"
)

// opVerb names what an apply step does to an object, for errors: "apply", "create", "patch",
// "replace", with the subresource ("patch status").
func opVerb(opts schema.ApplyOptions) string {
	v := opts.Mode
	if v == "" {
		v = "apply"
	}
	if opts.Subresource != "" {
		v += " " + opts.Subresource
	}
	return v
}

// subresources is the optional subresource argument of the dynamic client's calls.
func subresources(opts schema.ApplyOptions) []string {
	if opts.Subresource == "" {
		return nil
	}
	return []string{opts.Subresource}
}

// writeOne writes one object in the step's mode and says whether it created it:
//   - apply: server-side apply (field manager "labrun"; opts.Force takes over conflicts);
//   - create: POST; an object that exists already is an error;
//   - patch: JSON merge patch (RFC 7386) of an existing object;
//   - replace: PUT of the whole object over an existing one (its resourceVersion is read first).
//
// Objects this run creates carry its marks (runlabels.go); a replace keeps the marks an earlier
// run set, as an apply does. A subresource ("status") is written only to an existing object.
func (d *driver) writeOne(ctx context.Context, o *object, opts schema.ApplyOptions) (created bool, err error) {
	ri := d.resourceOf(o)
	name := o.u.GetName()
	switch opts.Mode {
	case "", "apply":
		if opts.Subresource == "" {
			return d.applyOne(ctx, o, false, opts.Force)
		}
		data, err := o.u.MarshalJSON()
		if err != nil {
			return false, err
		}
		force := opts.Force
		_, err = ri.Patch(ctx, name, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force, FieldValidation: "Strict"}, subresources(opts)...)
		return false, missing(err, opts)
	case "create":
		if opts.Subresource != "" {
			return false, fmt.Errorf("mode \"create\" cannot write subresource %q", opts.Subresource)
		}
		cur, err := ri.Get(ctx, name, getOpts)
		if err == nil && cur.GetDeletionTimestamp() != nil {
			d.logf("kube: %s is being deleted; waiting until it is gone before creating it again", o)
			if err := d.waitGone(ctx, []deletion{{what: o.String(), ri: ri, name: name}}); err != nil {
				return false, err
			}
		}
		u := o.u.DeepCopy()
		d.opts.Run.stamp(u)
		_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager, FieldValidation: "Strict"})
		if apierrors.IsAlreadyExists(err) {
			return false, fmt.Errorf("it exists already: mode \"create\" only creates (mode \"apply\" or \"replace\" changes an existing object)")
		}
		// created with an error: sent, but its answer lost (ApplyWith's Unsure).
		return err == nil || answerLost(err), err
	case "patch":
		data, err := o.u.MarshalJSON()
		if err != nil {
			return false, err
		}
		_, err = ri.Patch(ctx, name, types.MergePatchType, data,
			metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: "Strict"}, subresources(opts)...)
		return false, missing(err, opts)
	case "replace":
		for attempt := 0; ; attempt++ {
			cur, err := ri.Get(ctx, name, getOpts)
			if err != nil {
				return false, missing(err, opts)
			}
			u := o.u.DeepCopy()
			keepMarks(cur, u)
			u.SetResourceVersion(cur.GetResourceVersion())
			uo := metav1.UpdateOptions{FieldManager: fieldManager, FieldValidation: "Strict"}
			if opts.Subresource == "status" {
				_, err = ri.UpdateStatus(ctx, u, uo)
			} else {
				_, err = ri.Update(ctx, u, uo)
			}
			// A controller may write the object between the read and the write: read again.
			if apierrors.IsConflict(err) && attempt < 3 {
				continue
			}
			return false, err
		}
	}
	return false, fmt.Errorf("unknown mode %q (expected \"apply\", \"create\", \"patch\" or \"replace\")", opts.Mode)
}

// missing turns "not found" into what the mode needs.
func missing(err error, opts schema.ApplyOptions) error {
	if !apierrors.IsNotFound(err) {
		return err
	}
	what := "mode \"" + opts.Mode + "\" changes an existing object (mode \"apply\" or \"create\" makes one)"
	if opts.Subresource != "" {
		what = "subresource \"" + opts.Subresource + "\" is written only to an existing object"
	}
	return fmt.Errorf("it does not exist: %s", what)
}

// DefinedKinds returns the group and kind of every CRD among the objects; it reads the objects
// only.
func (d *driver) DefinedKinds(ctx context.Context, objects []schema.Object, files []string) ([]schema.GroupKind, error) {
	objs, err := decodeObjects(objects, files)
	if err != nil {
		return nil, err
	}
	var out []schema.GroupKind
	for gk := range batchCRDs(objs) {
		out = append(out, schema.GroupKind{Group: gk.Group, Kind: gk.Kind})
	}
	return out, nil
}
