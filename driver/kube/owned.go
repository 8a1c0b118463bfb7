package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"labrun.dev/labrun/schema"
)

// maxOwnerDepth bounds the owner references followed from an object (a Pod, its ReplicaSet,
// its Deployment, ...).
const maxOwnerDepth = 5

// Owned returns those of refs that this run created: objects with its run label, objects in
// a namespace with its run label, and objects whose owners (by owner references, as a
// Deployment's ReplicaSet and Pods) are such. Without a run ID nothing is the run's.
func (d *driver) Owned(ctx context.Context, refs []schema.ObjectRef) ([]schema.ObjectRef, error) {
	if d.opts.Run.ID == "" {
		return nil, nil
	}
	memo := map[string]bool{}
	var out []schema.ObjectRef
	for _, r := range refs {
		ok, err := d.owned(ctx, r.APIVersion, r.Kind, r.Namespace, r.Name, memo, 0)
		if err != nil {
			return nil, fmt.Errorf("which of the objects this run created: %s: %w", kindName(r.Kind, r.Namespace, r.Name), err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func (d *driver) owned(ctx context.Context, apiVersion, kind, ns, name string, memo map[string]bool, depth int) (bool, error) {
	key := apiVersion + "/" + kind + "/" + ns + "/" + name
	if v, ok := memo[key]; ok {
		return v, nil
	}
	memo[key] = false // a cycle of owners owns nothing
	if ns != "" {
		ok, err := d.owned(ctx, "v1", "Namespace", "", ns, memo, maxOwnerDepth)
		if err != nil || ok {
			memo[key] = ok
			return ok, err
		}
	}
	m, err := d.mappingFor(ctx, kind, apiVersion)
	if err != nil {
		return false, err
	}
	u, err := d.resourceFor(m.gvr, m.namespaced, ns).Get(ctx, name, getOpts)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if u.GetLabels()[LabelRun] == d.opts.Run.ID {
		memo[key] = true
		return true, nil
	}
	if depth >= maxOwnerDepth {
		return false, nil
	}
	for _, o := range u.GetOwnerReferences() {
		ons := ns
		if o.Kind == "Namespace" {
			ons = ""
		}
		ok, err := d.owned(ctx, o.APIVersion, o.Kind, ons, o.Name, memo, depth+1)
		if err != nil {
			return false, err
		}
		if ok {
			memo[key] = true
			return true, nil
		}
	}
	return false, nil
}
