package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"labrun.dev/labrun/schema"
)

// fieldManager owns the fields labrun applies.
const fieldManager = "labrun"

var getOpts = metav1.GetOptions{}

var crdGK = k8sschema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// object is one decoded object of an apply, delete or dry-run step.
type object struct {
	u *unstructured.Unstructured
	// source says where the object was written: "objects[1]" or "lab.yaml, document 2".
	source     string
	gvr        k8sschema.GroupVersionResource
	namespaced bool
	// pending: the kind is defined by a CRD of the same batch that the API server does not serve yet.
	pending bool
}

func (o *object) gvk() k8sschema.GroupVersionKind { return o.u.GroupVersionKind() }

func (o *object) String() string { return kindName(o.u.GetKind(), o.u.GetNamespace(), o.u.GetName()) }

func (o *object) ref() schema.ObjectRef {
	return schema.ObjectRef{APIVersion: o.u.GetAPIVersion(), Kind: o.u.GetKind(), Namespace: o.u.GetNamespace(), Name: o.u.GetName()}
}

// decodeObjects turns CUE structs and YAML/JSON files (multi-document, empty documents skipped,
// List kinds expanded) into objects.
func decodeObjects(objects []schema.Object, files []string) ([]*object, error) {
	var out []*object
	var errs []error
	add := func(m map[string]any, source string) {
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			i := 0
			err := u.EachListItem(func(item runtime.Object) error {
				i++
				out = append(out, &object{u: item.(*unstructured.Unstructured), source: fmt.Sprintf("%s, item %d", source, i)})
				return nil
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", source, err))
			}
			return
		}
		out = append(out, &object{u: u, source: source})
	}
	for i, o := range objects {
		// A JSON round trip gives the value the types unstructured content must have
		// (int64, float64, string, bool, []any, map[string]any) whatever CUE decoded.
		b, err := utiljson.Marshal(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("objects[%d]: %w", i, err))
			continue
		}
		var m map[string]any
		if err := utiljson.Unmarshal(b, &m); err != nil {
			errs = append(errs, fmt.Errorf("objects[%d]: %w", i, err))
			continue
		}
		add(m, fmt.Sprintf("objects[%d]", i))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs, err := decodeDocuments(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		before, errsBefore := len(out), len(errs)
		for _, doc := range docs {
			if doc.m != nil {
				add(doc.m, f+", "+doc.at)
			}
		}
		if len(out) == before && len(errs) == errsBefore {
			// Only comments, empty documents or an empty List: the step would do nothing.
			errs = append(errs, fmt.Errorf("%s holds no object (only comments, empty documents or an empty List)", f))
		}
	}
	for _, o := range out {
		var missing []string
		if o.u.GetAPIVersion() == "" {
			missing = append(missing, "apiVersion")
		}
		if o.u.GetKind() == "" {
			missing = append(missing, "kind")
		}
		if o.u.GetName() == "" {
			missing = append(missing, "metadata.name")
		}
		if len(missing) > 0 {
			hint := ""
			if o.u.GetName() == "" && o.u.GetGenerateName() != "" {
				hint = " (" + schema.GenerateNameHint + ")"
			}
			errs = append(errs, fmt.Errorf("%s: missing %s%s", o.source, strings.Join(missing, ", "), hint))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// document is one document of a YAML or JSON stream; m is nil for an empty one.
type document struct {
	m map[string]any
	// at says where it starts: "line 12" (YAML) or "document 2" (a JSON stream).
	at string
}

// decodeDocuments splits a YAML or JSON stream into documents. YAML is split at "---" lines here
// (rather than by the decoder, which drops empty documents) so that each document is named by
// the line it starts on; each is then decoded by NewYAMLOrJSONDecoder.
func decodeDocuments(data []byte) ([]document, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var docs []document
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for n := 1; ; n++ {
			at := fmt.Sprintf("document %d", n)
			m, err := decodeOne(dec)
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", at, err)
			}
			docs = append(docs, document{m: m, at: at})
		}
	}
	var docs []document
	start, line := 1, 0
	var chunk []byte
	flush := func() error {
		if len(bytes.TrimSpace(chunk)) == 0 {
			return nil
		}
		at := fmt.Sprintf("line %d", start)
		m, err := decodeOne(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(chunk), 4096))
		if errors.Is(err, io.EOF) {
			err = nil // only comments
		}
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		docs = append(docs, document{m: m, at: at})
		return nil
	}
	for rest := data; len(rest) > 0; {
		var l []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i+1], rest[i+1:]
		} else {
			l, rest = rest, nil
		}
		line++
		if isDocSeparator(l) {
			if err := flush(); err != nil {
				return nil, err
			}
			chunk, start = nil, line+1
			continue
		}
		chunk = append(chunk, l...)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

// isDocSeparator reports a YAML document separator line: "---", maybe followed by a comment.
func isDocSeparator(l []byte) bool {
	l = bytes.TrimRight(l, " \t\r\n")
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	r := bytes.TrimLeft(l[3:], " \t")
	return len(r) == 0 || r[0] == '#'
}

// decodeOne decodes the next document; nil for an empty one (null).
func decodeOne(dec *utilyaml.YAMLOrJSONDecoder) (map[string]any, error) {
	var ext runtime.RawExtension
	if err := dec.Decode(&ext); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(ext.Raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	return m, nil
}

// crdInfo is what a CRD of the batch says about its kind.
type crdInfo struct {
	name       string
	plural     string
	namespaced bool
	versions   []string
}

// batchCRDs indexes the CRDs of a batch by the kind they define.
func batchCRDs(objs []*object) map[k8sschema.GroupKind]crdInfo {
	out := map[k8sschema.GroupKind]crdInfo{}
	for _, o := range objs {
		if o.gvk().GroupKind() != crdGK {
			continue
		}
		group, _, _ := unstructured.NestedString(o.u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(o.u.Object, "spec", "scope")
		info := crdInfo{name: o.u.GetName(), plural: plural, namespaced: scope != "Cluster"}
		versions, _, _ := unstructured.NestedSlice(o.u.Object, "spec", "versions")
		for _, v := range versions {
			if vm, ok := v.(map[string]any); ok {
				if name, ok := vm["name"].(string); ok {
					info.versions = append(info.versions, name)
				}
			}
		}
		out[k8sschema.GroupKind{Group: group, Kind: kind}] = info
	}
	return out
}

// resolve finds each object's resource and scope and fills in default namespaces: the
// object's own, else namespace, else the driver's default. A kind the API server does not
// serve is fine when a CRD of the same batch defines it (the object is then pending).
func (d *driver) resolve(ctx context.Context, objs []*object, namespace string) error {
	crds := batchCRDs(objs)
	reset := false
	var errs []error
	var unknown []schema.GroupKind
	others := false
	for _, o := range objs {
		gvk := o.gvk()
		m, err := d.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) && !reset {
			// The cached discovery may predate a CRD installed since: look again, once.
			reset = true
			d.mapper.ResetWithContext(ctx)
			m, err = d.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		}
		switch {
		case err == nil:
			o.gvr = m.Resource
			o.namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
			o.pending = false
		case meta.IsNoMatchError(err):
			c, ok := crds[gvk.GroupKind()]
			if !ok || !slices.Contains(c.versions, gvk.Version) {
				errs = append(errs, fmt.Errorf("%s: %s: the API server serves no kind %s in %s (is its CRD installed?)",
					o.source, o, gvk.Kind, gvk.GroupVersion()))
				if gk := (schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}); !slices.Contains(unknown, gk) {
					unknown = append(unknown, gk)
				}
				continue
			}
			o.gvr = gvk.GroupVersion().WithResource(c.plural)
			o.namespaced = c.namespaced
			o.pending = true
		default:
			errs = append(errs, fmt.Errorf("%s: %s: %w", o.source, o, err))
			others = true
			continue
		}
		switch {
		case o.namespaced && o.u.GetNamespace() == "":
			o.u.SetNamespace(d.ns(namespace))
		case !o.namespaced && o.u.GetNamespace() != "":
			d.logf("kube: %s: %s is cluster-scoped; its namespace %q is ignored", o.source, gvk.Kind, o.u.GetNamespace())
			o.u.SetNamespace("")
		}
	}
	if len(unknown) > 0 && !others {
		// Typed, so that the interpreter can tell a kind whose CRD an earlier step applies.
		return &schema.UnknownKindsError{Kinds: unknown, Err: errors.Join(errs...)}
	}
	return errors.Join(errs...)
}

func (d *driver) resourceFor(gvr k8sschema.GroupVersionResource, namespaced bool, ns string) dynamic.ResourceInterface {
	if namespaced {
		return d.dyn.Resource(gvr).Namespace(ns)
	}
	return d.dyn.Resource(gvr)
}

func (d *driver) resourceOf(o *object) dynamic.ResourceInterface {
	return d.resourceFor(o.gvr, o.namespaced, o.u.GetNamespace())
}

func (d *driver) decodeResolve(ctx context.Context, objects []schema.Object, files []string, namespace string) ([]*object, error) {
	objs, err := decodeObjects(objects, files)
	if err != nil {
		return nil, err
	}
	if err := d.resolve(ctx, objs, namespace); err != nil {
		return nil, err
	}
	return objs, nil
}

// Objects decodes the objects of an apply or delete step and fills in namespaces. It reads
// discovery (to tell namespaced kinds from cluster-scoped ones) and changes nothing.
func (d *driver) Objects(ctx context.Context, objects []schema.Object, files []string, namespace string) ([]schema.ObjectRef, error) {
	objs, err := d.decodeResolve(ctx, objects, files, namespace)
	if err != nil {
		return nil, err
	}
	refs := make([]schema.ObjectRef, len(objs))
	for i, o := range objs {
		refs[i] = o.ref()
	}
	return refs, nil
}

// Apply applies the objects by server-side apply (field manager "labrun", forced, strict field
// validation): ApplyWith in mode "apply".
func (d *driver) Apply(ctx context.Context, objects []schema.Object, files []string, namespace string) (schema.ApplyResult, error) {
	return d.ApplyWith(ctx, objects, files, namespace, schema.ApplyOptions{Mode: "apply", Force: true})
}

// ApplyWith writes the objects in opts.Mode (see writeOne). CRDs go first and are waited for
// (Established), then Namespaces, then the rest in the order written. Every object is
// written, as Chainsaw does: an object the API server refuses does not keep the others from
// being applied, and the error lists every refusal, one per line. The result lists what was
// applied and created, so that cleanup can remove it.
func (d *driver) ApplyWith(ctx context.Context, objects []schema.Object, files []string, namespace string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	var res schema.ApplyResult
	objs, err := d.decodeResolve(ctx, objects, files, namespace)
	if err != nil {
		return res, err
	}
	if err := d.guardObjects("apply", objs); err != nil {
		return res, err
	}
	var crds, namespaces, rest []*object
	for _, o := range objs {
		switch gk := o.gvk().GroupKind(); {
		case gk == crdGK:
			crds = append(crds, o)
		case gk == k8sschema.GroupKind{Kind: "Namespace"}:
			namespaces = append(namespaces, o)
		default:
			rest = append(rest, o)
		}
	}
	apply := func(o *object) error {
		created, err := d.writeOne(ctx, o, opts)
		if err != nil {
			if created && answerLost(err) {
				res.Unsure = append(res.Unsure, o.ref())
			}
			return &refusal{what: fmt.Sprintf("%s %s", opVerb(opts), o), source: o.source, err: tidyError{err}}
		}
		res.Applied = append(res.Applied, o.ref())
		if created {
			res.Created = append(res.Created, o.ref())
		}
		return nil
	}
	var refused []error
	var written []*object
	for _, o := range crds {
		if err := apply(o); err != nil {
			refused = append(refused, err)
		} else {
			written = append(written, o)
		}
	}
	if len(written) > 0 {
		if err := d.waitEstablished(ctx, written); err != nil {
			return res, errors.Join(append(refused, err)...)
		}
		d.mapper.ResetWithContext(ctx)
	}
	for _, o := range namespaces {
		if err := apply(o); err != nil {
			refused = append(refused, err)
		}
	}
	for _, o := range rest {
		if ctx.Err() != nil {
			break // the step's time is over: what was refused so far, and why it stopped
		}
		if o.pending {
			if err := d.waitServed(ctx, o); err != nil {
				refused = append(refused, &refusal{what: fmt.Sprintf("%s %s", opVerb(opts), o), source: o.source, err: err})
				continue
			}
		}
		if err := apply(o); err != nil {
			refused = append(refused, err)
		}
	}
	if len(refused) == 0 && ctx.Err() != nil && len(res.Applied) < len(objs) {
		return res, context.Cause(ctx)
	}
	return res, errors.Join(refused...)
}

// answerLost reports whether err, the error of a write the API server was sent, leaves its
// outcome unknown: no answer came (the request was cancelled, its connection lost), or the
// server said it timed out. A status the server answered with (invalid, forbidden, a
// conflict) says the write did not happen.
func answerLost(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
	}
	return true
}

func (d *driver) guardObjects(op string, objs []*object) error {
	var errs []error
	for _, o := range objs {
		errs = append(errs, d.guard.object(op, o.u.GetKind(), o.gvk().Group, o.u.GetNamespace(), o.u.GetName(), o.namespaced))
	}
	return errors.Join(errs...)
}

// applyOne server-side applies one object and says whether it did not exist before. An object
// that is being deleted (e.g. a namespace still terminating after the last run's cleanup) is
// waited for first, since applying to it would fail or be lost.
func (d *driver) applyOne(ctx context.Context, o *object, dryRun, force bool) (created bool, err error) {
	ri := d.resourceOf(o)
	u := o.u
	if !dryRun {
		cur, err := ri.Get(ctx, o.u.GetName(), getOpts)
		switch {
		case apierrors.IsNotFound(err):
			created = true
		case err != nil:
			return false, err
		case cur.GetDeletionTimestamp() != nil:
			d.logf("kube: %s is being deleted; waiting until it is gone before applying it again", o)
			if err := d.waitGone(ctx, []deletion{{what: o.String(), ri: ri, name: o.u.GetName()}}); err != nil {
				return false, err
			}
			created = true
		}
		// What this run creates carries its marks; what an earlier run created keeps its own;
		// what labrun did not create (the user's) gets none.
		u = o.u.DeepCopy()
		if created {
			d.opts.Run.stamp(u)
		} else {
			keepMarks(cur, u)
		}
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return false, err
	}
	// From here, created with an error means the patch was sent: ApplyWith asks whether its
	// answer was lost (answerLost).
	po := metav1.PatchOptions{FieldManager: fieldManager, Force: &force, FieldValidation: "Strict"}
	if dryRun {
		po.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(ctx, o.u.GetName(), types.ApplyPatchType, data, po)
	return created, err
}

// waitEstablished waits until the API server serves every CRD's kind.
func (d *driver) waitEstablished(ctx context.Context, crds []*object) error {
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	ri := d.dyn.Resource(k8sschema.GroupVersionResource{Group: crdGK.Group, Version: "v1", Resource: "customresourcedefinitions"})
	for _, o := range crds {
		var last string
		err := poll(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
			u, err := ri.Get(ctx, o.u.GetName(), getOpts)
			if err != nil {
				if !isDeadline(err) {
					last = err.Error()
				}
				return false, nil
			}
			c, ok := findCondition(u.Object, "Established")
			if ok && c.status == "True" {
				return true, nil
			}
			last = "Established is " + c.describe()
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %s: %w", o.u.GetName(), last, err)
		}
	}
	return nil
}

// waitServed waits until discovery serves the kind of a pending object (a CRD of the same batch
// is established, but discovery can lag behind it a little).
func (d *driver) waitServed(ctx context.Context, o *object) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	gvk := o.gvk()
	err := poll(ctx, 300*time.Millisecond, func(ctx context.Context) (bool, error) {
		m, err := d.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			d.mapper.ResetWithContext(ctx)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		o.gvr = m.Resource
		o.namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
		o.pending = false
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("apply %s (%s): kind %s not served although its CRD is established: %w", o, o.source, gvk.Kind, err)
	}
	return nil
}

// DryRun server-side applies every object with dryRun=All, so the API server validates them
// against its schemas (Istio's CRDs reject misspelled fields). It returns every rejection. An
// object whose namespace does not exist yet is validated in namespace "default" instead; an
// object whose CRD is only in the same batch cannot be validated and is skipped with a note.
func (d *driver) DryRun(ctx context.Context, objects []schema.Object, files []string, namespace string) error {
	objs, err := d.decodeResolve(ctx, objects, files, namespace)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if o.pending {
			d.logf("kube: dry run: %s (%s) not validated: its CRD is in the same batch and not installed yet", o, o.source)
			continue
		}
		_, err := d.applyOne(ctx, o, true, true)
		if err != nil && o.namespaced && isNamespaceNotFound(err) {
			alt := &object{u: o.u.DeepCopy(), source: o.source, gvr: o.gvr, namespaced: true}
			alt.u.SetNamespace("default")
			d.logf("kube: dry run: namespace %q does not exist yet; %s validated in namespace default", o.u.GetNamespace(), o)
			_, err = d.applyOne(ctx, alt, true, true)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %s", o, o.source, tidyMessage(apiMessage(err))))
		}
	}
	return errors.Join(errs...)
}

func isNamespaceNotFound(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return false
	}
	det := se.Status().Details
	return det != nil && det.Kind == "namespaces"
}

// apiMessage is the API server's message for err, or err's text.
func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

// goValue is how server-side apply prints a value its schema refuses: a Go literal.
var goValue = regexp.MustCompile(`&value\.valueUnstructured\{Value:([^{}]*)\}`)

// tidyMessage writes the Go literals of a server-side apply rejection as the values written:
// "expected string, got &value.valueUnstructured{Value:true}" becomes "expected string, got true".
func tidyMessage(msg string) string { return goValue.ReplaceAllString(msg, "$1") }

// tidyError is err with its message tidied (tidyMessage); errors.As still sees err.
type tidyError struct{ error }

// refusal is the error of one object an apply wrote: "apply Kind ns/name (source): why".
// Unsourced leaves out the source (the file and line, or "objects"), which an expectFail
// pattern is not matched against: a pattern that named the file (a folder, "bad.yaml")
// matched every refusal of that file's objects, whatever the API server said.
type refusal struct {
	what, source string
	err          error
}

func (e *refusal) Error() string     { return fmt.Sprintf("%s (%s): %v", e.what, e.source, e.err) }
func (e *refusal) Unwrap() error     { return e.err }
func (e *refusal) Unsourced() string { return fmt.Sprintf("%s: %v", e.what, e.err) }

func (e tidyError) Error() string { return tidyMessage(e.error.Error()) }
func (e tidyError) Unwrap() error { return e.error }

// deletion is one object to delete or wait for.
type deletion struct {
	what string
	ref  schema.ObjectRef // its namespace defaulted
	ri   dynamic.ResourceInterface
	name string
	uid  types.UID // of the object deleted; "" when it was absent
	// isNamespace: a core Namespace, which labrun deletes only when it created it.
	isNamespace bool
}

// Delete deletes the objects (background propagation, like kubectl); absent objects and kinds
// the API server does not serve are fine. With wait, it returns when every object is gone.
func (d *driver) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	var dels []deletion
	var errs []error
	var absent, unserved []schema.ObjectRef
	reset := false
	for _, r := range refs {
		gv, err := k8sschema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", kindName(r.Kind, r.Namespace, r.Name), err))
			continue
		}
		gk := k8sschema.GroupKind{Group: gv.Group, Kind: r.Kind}
		m, err := d.mapper.RESTMappingWithContext(ctx, gk, gv.Version)
		if meta.IsNoMatchError(err) && !reset {
			reset = true
			d.mapper.ResetWithContext(ctx)
			m, err = d.mapper.RESTMappingWithContext(ctx, gk, gv.Version)
		}
		if meta.IsNoMatchError(err) {
			d.logf("kube: delete %s: kind %s is not served (its CRD is gone?); nothing to delete", kindName(r.Kind, r.Namespace, r.Name), r.Kind)
			unserved = append(unserved, r)
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", kindName(r.Kind, r.Namespace, r.Name), err))
			continue
		}
		namespaced := m.Scope.Name() == meta.RESTScopeNameNamespace
		ns := ""
		if namespaced {
			ns = d.ns(r.Namespace)
		}
		if err := d.guard.object("delete", r.Kind, gv.Group, ns, r.Name, namespaced); err != nil {
			errs = append(errs, err)
			continue
		}
		r.Namespace = ns
		dels = append(dels, deletion{what: kindName(r.Kind, ns, r.Name), ref: r, ri: d.resourceFor(m.Resource, namespaced, ns), name: r.Name, isNamespace: !namespaced && gv.Group == "" && r.Kind == "Namespace"})
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := d.refuseStrangeNamespaces(ctx, dels); err != nil {
		return err
	}
	background := metav1.DeletePropagationBackground
	existed := 0
	for i, del := range dels {
		// The object's uid tells it from one a controller makes again under its name at once
		// (schema.EveryNamespace's kube-root-ca.crt, a Deployment's Service account token...):
		// that one is not waited for.
		u, err := del.ri.Get(ctx, del.name, getOpts)
		if apierrors.IsNotFound(err) {
			absent = append(absent, del.ref)
			continue
		}
		if err != nil {
			return fmt.Errorf("delete %s: %w", del.what, err)
		}
		existed++
		uid := u.GetUID()
		dels[i].uid = uid
		err = del.ri.Delete(ctx, del.name, metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete %s: %w", del.what, err)
		}
	}
	var gone error
	if len(absent)+len(unserved) > 0 {
		gone = &schema.AbsentError{Absent: absent, Unserved: unserved, All: existed == 0}
	}
	if existed == 0 || !wait {
		return gone
	}
	if err := d.waitGone(ctx, dels); err != nil {
		return err
	}
	return gone
}

// refuseStrangeNamespaces refuses, before anything is deleted, the deletion of a Namespace
// that labrun did not create (it has no run label): whoever made it owns it, and what is in it.
func (d *driver) refuseStrangeNamespaces(ctx context.Context, dels []deletion) error {
	var errs []error
	for _, del := range dels {
		if !del.isNamespace {
			continue
		}
		u, err := del.ri.Get(ctx, del.name, getOpts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("delete %s: %w", del.what, err)
		}
		if _, ok := u.GetLabels()[LabelRun]; !ok {
			errs = append(errs, refused("delete %s: %w: labrun did not create it (it has no %s label), and never deletes a namespace it did not create", del.what, ErrRefused, LabelRun))
		}
	}
	return errors.Join(errs...)
}

// waitGone waits until every object is gone. The error names those still there and what holds
// them (finalizers, phase).
func (d *driver) waitGone(ctx context.Context, dels []deletion) error {
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	left := slices.Clone(dels)
	state := map[string]string{}
	err := poll(ctx, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		var still []deletion
		for _, del := range left {
			u, err := del.ri.Get(ctx, del.name, getOpts)
			if apierrors.IsNotFound(err) || err == nil && del.uid != "" && u.GetUID() != del.uid {
				continue // gone, or another object under its name
			}
			if err != nil {
				if !isDeadline(err) {
					state[del.what] = err.Error()
				}
			} else {
				state[del.what] = deletionState(u)
			}
			still = append(still, del)
		}
		left = still
		return len(left) == 0, nil
	})
	if err != nil {
		var parts []string
		for _, del := range left {
			parts = append(parts, del.what+" ("+state[del.what]+")")
		}
		return fmt.Errorf("waiting for deletion: still present: %s: %w", strings.Join(parts, "; "), err)
	}
	return nil
}

// deletionState says what keeps an object: whether deletion started, its finalizers and phase.
// interp's Record.LeftBehind reads "deletion started …, finalizers a,b" of it, in the cleanup's
// line, to say that finalizers hold a leftover (which labrun clean cannot remove).
func deletionState(u *unstructured.Unstructured) string {
	var parts []string
	if u.GetDeletionTimestamp() == nil {
		parts = append(parts, "not being deleted")
	} else {
		parts = append(parts, "deletion started "+u.GetDeletionTimestamp().UTC().Format(time.RFC3339))
	}
	fins := u.GetFinalizers()
	if specFins, ok, _ := unstructured.NestedStringSlice(u.Object, "spec", "finalizers"); ok {
		fins = append(fins, specFins...)
	}
	if len(fins) > 0 {
		parts = append(parts, "finalizers "+strings.Join(fins, ","))
	}
	if phase, ok, _ := unstructured.NestedString(u.Object, "status", "phase"); ok {
		parts = append(parts, "phase "+phase)
	}
	return strings.Join(parts, ", ")
}

// isDeadline reports an error that only says the wait ran out of time (the context's, or
// client-go's rate limiter foreseeing it), which must not replace what the wait was waiting for.
func isDeadline(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		strings.Contains(err.Error(), "would exceed context deadline")
}

// poll calls f every interval until it returns true or an error, or ctx ends.
func poll(ctx context.Context, interval time.Duration, f func(context.Context) (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := f(ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
