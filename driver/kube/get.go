package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// kindMapping is a kind as the API server serves it.
type kindMapping struct {
	kind       string
	gvr        k8sschema.GroupVersionResource
	namespaced bool
}

// mappingFor finds a kind's resource. Without apiVersion the kind is looked up like kubectl
// does (as a resource name: "Deployment" → deployments.apps), so "Pod", "Deployment" and
// "DestinationRule" need no apiVersion.
func (d *driver) mappingFor(ctx context.Context, kind, apiVersion string) (kindMapping, error) {
	if kind == "" {
		return kindMapping{}, errors.New("needs a kind")
	}
	lookup := func() (*meta.RESTMapping, error) {
		if apiVersion != "" {
			gv, err := k8sschema.ParseGroupVersion(apiVersion)
			if err != nil {
				return nil, err
			}
			return d.mapper.RESTMappingWithContext(ctx, k8sschema.GroupKind{Group: gv.Group, Kind: kind}, gv.Version)
		}
		gvk, err := d.mapper.KindForWithContext(ctx, k8sschema.GroupVersionResource{Resource: strings.ToLower(kind)})
		if err != nil {
			return nil, err
		}
		return d.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	m, err := lookup()
	if meta.IsNoMatchError(err) {
		d.mapper.ResetWithContext(ctx)
		m, err = lookup()
	}
	if short := kubeshape.ShortKind(kind); short != "" && meta.IsNoMatchError(err) {
		// A built-in resource's short name, as kubectl takes it (hpa, svc, deploy): vet
		// checks the fields read below it as that kind's (kubeshape.Builtin).
		kind = short
		m, err = lookup()
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			if apiVersion == "" {
				return kindMapping{}, fmt.Errorf("the API server serves no kind %q (give apiVersion if it is ambiguous)", kind)
			}
			return kindMapping{}, fmt.Errorf("the API server serves no kind %q in %s", kind, apiVersion)
		}
		return kindMapping{}, err
	}
	return kindMapping{kind: m.GroupVersionKind.Kind, gvr: m.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}

// errBadSelector marks a selector that does not parse.
var errBadSelector = errors.New("bad selector")

func isBadSelector(err error) bool { return errors.Is(err, errBadSelector) }

// getObjects returns the named object, or the objects the selector matches (all without one),
// sorted by creation time, then name.
func (d *driver) getObjects(ctx context.Context, ri dynamic.ResourceInterface, name, selector string) ([]unstructured.Unstructured, error) {
	if name != "" {
		u, err := ri.Get(ctx, name, getOpts)
		if err != nil {
			return nil, err
		}
		return []unstructured.Unstructured{*u}, nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", errBadSelector, selector, err)
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	items := list.Items
	sortObjects(items)
	return items, nil
}

// sortObjects sorts by creation time, then name: the order in which "the first pod" and
// "items.0" mean the oldest.
func sortObjects(items []unstructured.Unstructured) {
	slices.SortStableFunc(items, func(a, b unstructured.Unstructured) int {
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if c := ta.Time.Compare(tb.Time); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
}

// Get returns an object (by name), a list of objects (by selector, or all), or with a path the
// field of the object or of each listed object. Values are JSON-like: map[string]any, []any,
// string, float64, bool, nil. When what it reads holds a status (no path, or a path under
// status) that its controller has not yet written for the object's current generation, it
// returns an error wrapping schema.ErrNotObserved instead (see unobserved).
func (d *driver) Get(ctx context.Context, req schema.Get) (any, error) {
	m, err := d.mappingFor(ctx, req.Kind, req.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", req.Kind, err)
	}
	ns := ""
	if m.namespaced {
		ns = d.ns(req.Namespace)
	}
	if err := checkPath(req.Path); err != nil {
		return nil, fmt.Errorf("get %s: %w", m.kind, err)
	}
	objs, err := d.getObjects(ctx, d.resourceFor(m.gvr, m.namespaced, ns), req.Name, req.Selector)
	if apierrors.IsNotFound(err) {
		err = notFound{err}
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", kindName(m.kind, ns, req.Name+selectorSuffix(req)), err)
	}
	// A status its controller wrote before it saw the object as it is now (right after an
	// apply) says nothing of it yet: the caller reads again (schema.ErrNotObserved).
	if readsStatus(req.Path) {
		for _, o := range objs {
			if no := unobserved(o.Object); no != nil {
				return nil, fmt.Errorf("get %s: %w", kindName(m.kind, ns, o.GetName()), no)
			}
		}
	}
	if req.Name != "" {
		v, err := fieldAt(objs[0].Object, req.Path)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", kindName(m.kind, ns, req.Name), err)
		}
		return v, nil
	}
	out := make([]any, 0, len(objs))
	for _, o := range objs {
		v, err := fieldAt(o.Object, req.Path)
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", kindName(m.kind, ns, o.GetName()), err)
		}
		out = append(out, v)
	}
	return out, nil
}

// notFound is an API server's NotFound, which is schema.ErrNotFound.
type notFound struct{ error }

func (notFound) Is(target error) bool { return target == schema.ErrNotFound }
func (e notFound) Unwrap() error      { return e.error }

func selectorSuffix(req schema.Get) string {
	if req.Name != "" {
		return ""
	}
	return "{" + req.Selector + "}"
}

// fieldAt returns the value at path in an object (the whole object for ""), in the path
// syntax of config steps (envoy.Query): "status.podIP", "spec.containers.0.name",
// `metadata.annotations."kubectl.kubernetes.io/restartedAt"`.
func fieldAt(obj map[string]any, path string) (any, error) {
	return envoy.Query(jsonLike(obj), path)
}

// checkPath reports a path that does not parse, before anything is fetched.
func checkPath(path string) error {
	if path == "" {
		return nil
	}
	_, err := envoy.Query(map[string]any{}, path)
	if errors.Is(err, envoy.ErrNotFound) {
		return nil
	}
	return err
}

// jsonLike returns v with the number types unstructured content uses turned into float64, as
// encoding/json would decode them, so that expressions see one number type.
func jsonLike(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonLike(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonLike(e)
		}
		return out
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int:
		return float64(x)
	default:
		return v
	}
}
