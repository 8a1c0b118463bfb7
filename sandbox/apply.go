package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// fieldManager owns what the sandbox applies.
const fieldManager = "labrun-sandbox"

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applier server-side-applies multi-document YAML with a dynamic client.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(cs kubernetes.Interface, dyn dynamic.Interface) *applier {
	return &applier{
		dyn:    dyn,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery())),
	}
}

// apply server-side-applies every document of manifests (YAML or JSON, "---"-separated). CRDs go
// first, concurrently, and are waited for until Established; the other documents follow in order.
// Objects without a namespace go to "default" when namespaced.
func (a *applier) apply(ctx context.Context, manifests []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	type doc struct {
		n int
		u *unstructured.Unstructured
	}
	var crds, rest []doc
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			crds = append(crds, doc{i + 1, u})
		} else {
			rest = append(rest, doc{i + 1, u})
		}
	}
	if len(crds) > 0 {
		errs := make([]error, len(crds))
		var wg sync.WaitGroup
		limit := make(chan struct{}, 8)
		for i, d := range crds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				limit <- struct{}{}
				defer func() { <-limit }()
				if err := a.applyObject(ctx, d.u); err != nil {
					errs[i] = fmt.Errorf("document %d (CustomResourceDefinition %s): %w", d.n, d.u.GetName(), err)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		names := make([]string, len(crds))
		for i, d := range crds {
			names[i] = d.u.GetName()
		}
		if err := a.waitEstablished(ctx, names); err != nil {
			return err
		}
		a.mapper.Reset()
	}
	for _, d := range rest {
		if err := a.applyObject(ctx, d.u); err != nil {
			return fmt.Errorf("document %d (%s %s): %w", d.n, d.u.GetKind(), d.u.GetName(), err)
		}
	}
	return nil
}

// applyObject applies one object, refreshing discovery while its kind is not known yet (a CRD that
// was just established).
func (a *applier) applyObject(ctx context.Context, u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	var mapping *meta.RESTMapping
	var err error
	for attempt := 0; ; attempt++ {
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			break
		}
		if !meta.IsNoMatchError(err) || attempt >= 20 {
			return err
		}
		a.mapper.Reset()
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
			u.SetNamespace(ns)
		}
		ri = a.dyn.Resource(mapping.Resource).Namespace(ns)
	}
	_, err = ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	return err
}

// waitEstablished waits until every named CRD has the Established condition.
func (a *applier) waitEstablished(ctx context.Context, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, name := range names {
		for {
			u, err := a.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s: %w", name, err)
			}
			if err == nil && established(u) {
				break
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return fmt.Errorf("CRD %s not established: %w", name, err)
			}
		}
	}
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
