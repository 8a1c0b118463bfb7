package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"labrun.dev/labrun/internal/didyoumean"
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
		return false, shortPatchError(missing(err, opts), o.gvk().Kind)
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

var _ schema.PatchDryRunner = (*driver)(nil)

// DryRunPatch dry-runs (dryRun=All, strict field validation) the merge patch of every object
// that exists, so that vet --server catches a misspelled field of a patch before a run. Only
// the refusal of unknown or duplicate fields is returned: whatever else the server says of the
// patched object depends on what the object is now, not on what it will be when the step runs.
// Objects that do not exist (their namespace neither) are returned as missing, unchecked.
func (d *driver) DryRunPatch(ctx context.Context, objects []schema.Object, files []string, namespace string) ([]schema.ObjectRef, error) {
	objs, err := d.decodeResolve(ctx, objects, files, namespace)
	if err != nil {
		return nil, err
	}
	var missing []schema.ObjectRef
	var errs []error
	for _, o := range objs {
		if o.pending {
			missing = append(missing, o.ref())
			continue
		}
		data, err := o.u.MarshalJSON()
		if err != nil {
			return missing, err
		}
		_, err = d.resourceOf(o).Patch(ctx, o.u.GetName(), types.MergePatchType, data,
			metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsNotFound(err) {
			missing = append(missing, o.ref())
			continue
		}
		var short *detailedError
		if errors.As(shortPatchError(err, o.gvk().Kind), &short) {
			errs = append(errs, fmt.Errorf("%s (%s): %s", o, o.source, short.msg))
		}
	}
	return missing, errors.Join(errs...)
}

// strictFieldRE finds the fields a strict decoding error names: unknown field "spec.a.b".
var strictFieldRE = regexp.MustCompile(`(unknown|duplicate) field "([^"]+)"`)

// shortPatchError puts the API server's refusal of a strict merge patch in a few words. The
// server says `"" is invalid: patch: Invalid value: "<the whole patched object, as escaped
// JSON: managedFields, annotations, ...>": strict decoding error: unknown field "spec.x.y"`,
// some 1.5 KB with the point at the end; this says `unknown field spec.x.y: the cluster's Kind
// has no such field (did you mean z?)` (the candidates are the field's siblings in the patched
// object), with the path unquoted so that the step's error is placed at the field written (as
// vet --server places a create's). The server's own text is kept as the error's Detail, for
// the report's artifacts. Any other error is returned as it is.
func shortPatchError(err error, kind string) error {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Reason != metav1.StatusReasonInvalid || st.Status().Details == nil {
		return err
	}
	var parts []string
	for _, c := range st.Status().Details.Causes {
		if c.Field != "patch" {
			continue
		}
		_, strict, ok := strings.Cut(c.Message, "strict decoding error: ")
		if !ok {
			continue
		}
		patched := patchedObject(c.Message)
		for _, m := range strictFieldRE.FindAllStringSubmatch(strict, -1) {
			if m[1] == "duplicate" {
				parts = append(parts, fmt.Sprintf("duplicate field %s", m[2]))
				continue
			}
			msg := fmt.Sprintf("unknown field %s: the cluster's %s has no such field", m[2], kind)
			if near := nearField(patched, m[2]); near != "" {
				msg += " (did you mean " + near + "?)"
			}
			parts = append(parts, msg)
		}
	}
	if len(parts) == 0 {
		return err
	}
	return &detailedError{msg: strings.Join(parts, "; "), detail: strings.TrimSpace(err.Error()), err: err}
}

// patchedObject is the object the server's message quotes (Invalid value: "<JSON>": ...), or
// nil.
func patchedObject(msg string) map[string]any {
	_, rest, ok := strings.Cut(msg, "Invalid value: ")
	if !ok {
		return nil
	}
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return nil
	}
	js, err := strconv.Unquote(q)
	if err != nil {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal([]byte(js), &obj) != nil {
		return nil
	}
	return obj
}

// nearField is the sibling of the field at path ("spec.a.b", "spec.list[0].c") in obj closest
// to its name, if one is near enough to be what was meant.
func nearField(obj map[string]any, path string) string {
	segs := strings.Split(indexRE.ReplaceAllString(path, ".$1"), ".")
	var cur any = obj
	for _, s := range segs[:len(segs)-1] {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[s]
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(x) {
				return ""
			}
			cur = x[i]
		default:
			return ""
		}
	}
	m, _ := cur.(map[string]any)
	name := segs[len(segs)-1]
	var siblings []string
	for k := range m {
		if k != name {
			siblings = append(siblings, k)
		}
	}
	sort.Strings(siblings)
	return didyoumean.Closest(name, siblings)
}

// indexRE is a list index in a field path: [0].
var indexRE = regexp.MustCompile(`\[(\d+)\]`)

// detailedError is an error put in a few words for people; Detail is the full text it stands
// for (the API server's), which the step keeps as an artifact (schema.Details).
type detailedError struct {
	msg, detail string
	err         error
}

func (e *detailedError) Error() string  { return e.msg }
func (e *detailedError) Unwrap() error  { return e.err }
func (e *detailedError) Detail() string { return e.detail }
