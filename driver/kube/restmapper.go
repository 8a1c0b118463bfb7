package kube

import (
	"context"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// restMapper maps kinds to resources from API discovery. It behaves as client-go's
// DeferredDiscoveryRESTMapper over a memory-cached discovery client did: discovery is read on
// first use and kept until ResetWithContext, which the callers do when a kind is not found
// (a CRD applied since must become resolvable). The mappings are client-go restmapper's.
type restMapper struct {
	rc rest.Interface

	mu       sync.Mutex
	delegate meta.RESTMapper
}

func newRESTMapper(rc rest.Interface) *restMapper { return &restMapper{rc: rc} }

func (m *restMapper) get(ctx context.Context) (meta.RESTMapper, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.delegate != nil {
		return m.delegate, nil
	}
	dd, err := discover(ctx, m.rc)
	if err != nil {
		return nil, err
	}
	// Group versions that could not be read are left out, as client-go leaves them out.
	m.delegate = mapperFor(dd)
	return m.delegate, nil
}

// ResetWithContext drops what discovery said: the next mapping reads it again.
func (m *restMapper) ResetWithContext(context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delegate = nil
}

// RESTMappingWithContext is meta.RESTMapper's RESTMapping.
func (m *restMapper) RESTMappingWithContext(ctx context.Context, gk k8sschema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	del, err := m.get(ctx)
	if err != nil {
		return nil, err
	}
	return del.RESTMapping(gk, versions...)
}

// KindForWithContext is meta.RESTMapper's KindFor.
func (m *restMapper) KindForWithContext(ctx context.Context, resource k8sschema.GroupVersionResource) (k8sschema.GroupVersionKind, error) {
	del, err := m.get(ctx)
	if err != nil {
		return k8sschema.GroupVersionKind{}, err
	}
	return del.KindFor(resource)
}

// mapperFor is client-go restmapper's NewDiscoveryRESTMapper: one mapper per group version;
// the core group first, then each group's preferred version, its other versions, and any
// version of the group, in discovery's order.
func mapperFor(dd *discovered) meta.RESTMapper {
	var (
		multi         meta.MultiRESTMapper
		groupPriority []string
	)
	resourcePriority := []k8sschema.GroupVersionResource{{Group: "", Version: "v1", Resource: meta.AnyResource}}
	kindPriority := []k8sschema.GroupVersionKind{{Group: "", Version: "v1", Kind: meta.AnyKind}}
	for _, g := range dd.groups {
		groupPriority = append(groupPriority, g.Name)
		if preferred := g.PreferredVersion.Version; preferred != "" {
			if _, ok := dd.resources[k8sschema.GroupVersion{Group: g.Name, Version: preferred}]; ok {
				resourcePriority = append(resourcePriority, k8sschema.GroupVersionResource{Group: g.Name, Version: preferred, Resource: meta.AnyResource})
				kindPriority = append(kindPriority, k8sschema.GroupVersionKind{Group: g.Name, Version: preferred, Kind: meta.AnyKind})
			}
		}
		for _, v := range g.Versions {
			gv := k8sschema.GroupVersion{Group: g.Name, Version: v.Version}
			resources, ok := dd.resources[gv]
			if !ok {
				continue
			}
			if v.Version != g.PreferredVersion.Version {
				resourcePriority = append(resourcePriority, gv.WithResource(meta.AnyResource))
				kindPriority = append(kindPriority, gv.WithKind(meta.AnyKind))
			}
			vm := meta.NewDefaultRESTMapper([]k8sschema.GroupVersion{gv})
			for _, r := range resources {
				if strings.Contains(r.Name, "/") {
					continue // a subresource
				}
				scope := meta.RESTScopeNamespace
				if !r.Namespaced {
					scope = meta.RESTScopeRoot
				}
				plural, singular := gv.WithResource(r.Name), gv.WithResource(r.SingularName)
				if r.SingularName == "" {
					// Servers that list no singular names: guess, as client-go does.
					_, singular = meta.UnsafeGuessKindToResource(gv.WithKind(r.Kind))
				}
				vm.AddSpecific(gv.WithKind(strings.ToLower(r.Kind)), plural, singular, scope)
				vm.AddSpecific(gv.WithKind(r.Kind), plural, singular, scope)
				vm.Add(gv.WithKind(r.Kind+"List"), scope)
			}
			vm.Add(gv.WithKind("List"), meta.RESTScopeRoot)
			multi = append(multi, vm)
		}
	}
	for _, g := range groupPriority {
		resourcePriority = append(resourcePriority, k8sschema.GroupVersionResource{Group: g, Version: meta.AnyVersion, Resource: meta.AnyResource})
		kindPriority = append(kindPriority, k8sschema.GroupVersionKind{Group: g, Version: meta.AnyVersion, Kind: meta.AnyKind})
	}
	return meta.PriorityRESTMapper{Delegate: multi, ResourcePriority: resourcePriority, KindPriority: kindPriority}
}
