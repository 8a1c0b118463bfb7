package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// API discovery as client-go's discovery client does it, without that package: it links
// client-go's kubernetes/scheme, hence every group of k8s.io/api. The server is asked for
// aggregated discovery (two requests: /api and /apis) and, when it serves the older format,
// each group version is read on its own, in parallel.

// acceptDiscovery asks for aggregated discovery v2, else the per-group-version format.
const acceptDiscovery = runtime.ContentTypeJSON + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + runtime.ContentTypeJSON

// discovered is what the API server serves: its groups in its order (the core group first),
// the resources of each group version that could be read, and the group versions that could
// not.
type discovered struct {
	groups    []metav1.APIGroup
	resources map[k8sschema.GroupVersion][]metav1.APIResource
	failed    map[k8sschema.GroupVersion]error
}

// errGroupsFailed says which group versions could not be read. Its text is client-go's.
type errGroupsFailed map[k8sschema.GroupVersion]error

func (e errGroupsFailed) Error() string {
	var groups []string
	for gv, err := range e {
		groups = append(groups, fmt.Sprintf("%s: %v", gv, err))
	}
	sort.Strings(groups)
	return "unable to retrieve the complete list of server APIs: " + strings.Join(groups, ", ")
}

// newDiscoveryClient is a client of the API server's root paths (/api, /apis/<group>/...).
func newDiscoveryClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath, c.GroupVersion = "", nil
	c.NegotiatedSerializer = kubeTypes().codecs.WithoutConversion()
	return rest.UnversionedRESTClientFor(c)
}

// discover reads the groups and resources the API server serves. An error means the group
// list itself could not be read; group versions that fail are in discovered.failed.
func discover(ctx context.Context, rc rest.Interface) (*discovered, error) {
	legacy, err := discoverRoot(ctx, rc, "/api")
	if apierrors.IsNotFound(err) {
		// Tolerated as client-go does: aggregated API servers may not serve /api.
		legacy, err = &discovered{resources: map[k8sschema.GroupVersion][]metav1.APIResource{}}, nil
	}
	if err != nil {
		return nil, err
	}
	apis, err := discoverRoot(ctx, rc, "/apis")
	if err != nil {
		return nil, err
	}
	out := &discovered{
		groups: append(legacy.groups, apis.groups...),
		failed: map[k8sschema.GroupVersion]error{},
	}
	for gv, err := range legacy.failed {
		out.failed[gv] = err
	}
	for gv, err := range apis.failed {
		out.failed[gv] = err
	}
	if legacy.resources != nil && apis.resources != nil {
		out.resources = legacy.resources
		for gv, r := range apis.resources {
			out.resources[gv] = r
		}
		return out, nil
	}
	// The older format: the resources of each group version are a request of their own.
	out.resources = map[k8sschema.GroupVersion][]metav1.APIResource{}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, g := range out.groups {
		for _, v := range g.Versions {
			gv := k8sschema.GroupVersion{Group: g.Name, Version: v.Version}
			wg.Go(func() {
				list, err := groupVersionResources(ctx, rc, gv)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					out.failed[gv] = err
					return
				}
				out.resources[gv] = list
			})
		}
	}
	wg.Wait()
	return out, nil
}

// discoverRoot reads /api or /apis. Its resources are nil unless the server answered with
// aggregated discovery.
func discoverRoot(ctx context.Context, rc rest.Interface, path string) (*discovered, error) {
	var contentType string
	body, err := rc.Get().AbsPath(path).SetHeader("Accept", acceptDiscovery).Do(ctx).ContentType(&contentType).Raw()
	if err != nil {
		return nil, err
	}
	if isAggregated(contentType) {
		var list aggregatedGroupList
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, err
		}
		return list.split(), nil
	}
	if path == "/api" {
		var v metav1.APIVersions
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		g := metav1.APIGroup{}
		for _, version := range v.Versions {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: version, Version: version})
		}
		if len(g.Versions) > 0 {
			g.PreferredVersion = g.Versions[0]
		}
		return &discovered{groups: []metav1.APIGroup{g}}, nil
	}
	var groups metav1.APIGroupList
	if err := json.Unmarshal(body, &groups); err != nil {
		return nil, err
	}
	return &discovered{groups: groups.Groups}, nil
}

// isAggregated tells aggregated discovery v2 by the response's content type, whatever the
// order of its parameters and whatever a proxy added.
func isAggregated(contentType string) bool {
	base, params, err := mime.ParseMediaType(contentType)
	return err == nil && base == runtime.ContentTypeJSON &&
		params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" && params["as"] == "APIGroupDiscoveryList"
}

// groupVersionResources reads the resources of one group version (the older format).
func groupVersionResources(ctx context.Context, rc rest.Interface, gv k8sschema.GroupVersion) ([]metav1.APIResource, error) {
	path := "/apis/" + gv.String()
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	body, err := rc.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		if gv.Group == "" && gv.Version == "v1" && apierrors.IsNotFound(err) {
			return nil, nil // as client-go: an empty core group rather than an error
		}
		return nil, err
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	return list.APIResources, nil
}

// aggregatedGroupList is the part of apidiscovery.k8s.io/v2 APIGroupDiscoveryList labrun
// reads; its own type would link the k8s.io/api package of that group.
type aggregatedGroupList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource         string                   `json:"resource"`
				SingularResource string                   `json:"singularResource"`
				Scope            string                   `json:"scope"`
				ResponseKind     *metav1.GroupVersionKind `json:"responseKind"`
				ShortNames       []string                 `json:"shortNames"`
				Categories       []string                 `json:"categories"`
				Verbs            []string                 `json:"verbs"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// split turns aggregated discovery into groups and resources as client-go does: a stale group
// version has failed; the first version that is not stale is the preferred one; a resource
// without a kind is left out. Subresources are left out: labrun maps and lists resources only.
func (l aggregatedGroupList) split() *discovered {
	out := &discovered{
		resources: map[k8sschema.GroupVersion][]metav1.APIResource{},
		failed:    map[k8sschema.GroupVersion]error{},
	}
	for _, ag := range l.Items {
		g := metav1.APIGroup{Name: ag.Metadata.Name}
		for _, v := range ag.Versions {
			gv := k8sschema.GroupVersion{Group: g.Name, Version: v.Version}
			if v.Freshness == "Stale" {
				out.failed[gv] = fmt.Errorf("stale GroupVersion discovery: %v", gv)
				continue
			}
			version := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v.Version}
			g.Versions = append(g.Versions, version)
			if g.PreferredVersion == (metav1.GroupVersionForDiscovery{}) {
				g.PreferredVersion = version
			}
			resources := []metav1.APIResource{}
			for _, r := range v.Resources {
				if r.ResponseKind == nil || *r.ResponseKind == (metav1.GroupVersionKind{}) {
					continue
				}
				resources = append(resources, metav1.APIResource{
					Name:         r.Resource,
					SingularName: r.SingularResource,
					Namespaced:   r.Scope == "Namespaced",
					Group:        r.ResponseKind.Group,
					Version:      r.ResponseKind.Version,
					Kind:         r.ResponseKind.Kind,
					Verbs:        r.Verbs,
					ShortNames:   r.ShortNames,
					Categories:   r.Categories,
				})
			}
			out.resources[gv] = resources
		}
		out.groups = append(out.groups, g)
	}
	return out
}

// preferredResources is client-go's ServerPreferredResources: each resource (subresources
// left out) once, in its group's preferred version when that version serves it, else in the
// first version that does. Group versions that could not be read make an errGroupsFailed
// beside what was read; like client-go, it tries a second time first.
func preferredResources(ctx context.Context, rc rest.Interface) ([]*metav1.APIResourceList, error) {
	var (
		dd  *discovered
		err error
	)
	for range 2 {
		if dd, err = discover(ctx, rc); err != nil {
			return nil, err
		}
		if len(dd.failed) == 0 {
			break
		}
	}
	var result []*metav1.APIResourceList
	lists := map[k8sschema.GroupVersion]*metav1.APIResourceList{}
	chosen := map[k8sschema.GroupResource]k8sschema.GroupVersion{}
	chosenRes := map[k8sschema.GroupResource]metav1.APIResource{}
	for _, g := range dd.groups {
		for _, v := range g.Versions {
			gv := k8sschema.GroupVersion{Group: g.Name, Version: v.Version}
			resources, ok := dd.resources[gv]
			if !ok {
				continue
			}
			l := &metav1.APIResourceList{GroupVersion: v.GroupVersion}
			lists[gv] = l
			result = append(result, l)
			for _, r := range resources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				gr := k8sschema.GroupResource{Group: g.Name, Resource: r.Name}
				if _, ok := chosen[gr]; ok && v.Version != g.PreferredVersion.Version {
					continue
				}
				chosen[gr], chosenRes[gr] = gv, r
			}
		}
	}
	for gr, gv := range chosen {
		lists[gv].APIResources = append(lists[gv].APIResources, chosenRes[gr])
	}
	for _, l := range result {
		sort.Slice(l.APIResources, func(i, j int) bool { return l.APIResources[i].Name < l.APIResources[j].Name })
	}
	if len(dd.failed) > 0 {
		return result, errGroupsFailed(dd.failed)
	}
	return result, nil
}
