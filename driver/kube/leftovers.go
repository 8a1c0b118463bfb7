package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"labrun.dev/labrun/schema"
)

// Leftover is an object on the cluster that carries a run's marks.
type Leftover struct {
	schema.ObjectRef
	RunID    string
	Scenario string
	// Owner is the owner annotation as written; Host, PID and PIDStart are read from it (PID 0
	// when it is missing or unreadable).
	Owner    string
	Host     string
	PID      int
	PIDStart uint64
	// Terminating: its deletion has started (finalizers, a namespace emptying).
	Terminating bool

	gvr        k8sschema.GroupVersionResource
	namespaced bool
}

func (l Leftover) String() string { return kindName(l.Kind, l.Namespace, l.Name) }

// Cleaner finds and deletes what runs of labrun left on a cluster. It goes around the
// namespace guard: it deletes only objects that carry a run's marks, chosen by the caller.
type Cleaner struct {
	d        *driver
	Describe string
}

// NewCleaner connects to the cluster of opts (Kubeconfig, Context, timeouts; the guard's
// namespaces are not used) and checks that the credentials are accepted.
func NewCleaner(ctx context.Context, opts Options) (*Cleaner, error) {
	d, describe, err := newDriver(opts)
	if err != nil {
		return nil, err
	}
	if err := d.checkDiscovery(ctx); err != nil {
		return nil, err
	}
	return &Cleaner{d: d, Describe: describe}, nil
}

// List finds every object with a run label (and, when scenario is not empty, that scenario's
// label), in every resource the API server serves that can be listed and deleted. Namespaced
// resources are listed in all namespaces, or, when namespaces are given, in those only.
// Resources that cannot be listed (forbidden, say) are skipped: their errors are returned
// beside what was found.
func (c *Cleaner) List(ctx context.Context, scenario string, namespaces []string) ([]Leftover, []error) {
	d := c.d
	lists, err := preferredResources(ctx, d.disco)
	if err != nil && len(lists) == 0 {
		return nil, []error{fmt.Errorf("kube: reading the API server's resources: %w", err)}
	}
	var warnings []error
	if err != nil {
		warnings = append(warnings, fmt.Errorf("kube: some API groups could not be read: %w", err))
	}
	type res struct {
		gvr        k8sschema.GroupVersionResource
		namespaced bool
	}
	var all []res
	for _, l := range lists {
		gv, err := k8sschema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			all = append(all, res{gv.WithResource(r.Name), r.Namespaced})
		}
	}
	selector := LabelRun
	if scenario != "" {
		selector += "," + LabelScenario + "=" + ScenarioLabel(scenario)
	}
	var (
		mu    sync.Mutex
		found []Leftover
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 8)
	)
	for _, r := range all {
		scopes := []string{""}
		if r.namespaced && len(namespaces) > 0 {
			scopes = namespaces
		}
		for _, ns := range scopes {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				ul, err := d.resourceFor(r.gvr, r.namespaced, ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
						warnings = append(warnings, fmt.Errorf("kube: listing %s: %s", r.gvr.GroupResource(), apiMessage(err)))
					}
					return
				}
				for _, u := range ul.Items {
					l := Leftover{
						ObjectRef: schema.ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()},
						RunID:     u.GetLabels()[LabelRun],
						Scenario:  u.GetAnnotations()[AnnotationScenario],
						Owner:     u.GetAnnotations()[AnnotationOwner],
						gvr:       r.gvr, namespaced: r.namespaced,
						Terminating: u.GetDeletionTimestamp() != nil,
					}
					if l.Scenario == "" {
						l.Scenario = u.GetLabels()[LabelScenario]
					}
					if l.APIVersion == "" {
						l.APIVersion = r.gvr.GroupVersion().String()
					}
					l.Host, l.PID, l.PIDStart, _ = ParseOwner(l.Owner)
					found = append(found, l)
				}
			})
		}
	}
	wg.Wait()
	slices.SortFunc(found, func(a, b Leftover) int {
		return strings.Compare(a.RunID+"\x00"+a.Namespace+"\x00"+a.Kind+"\x00"+a.Name, b.RunID+"\x00"+b.Namespace+"\x00"+b.Kind+"\x00"+b.Name)
	})
	return found, warnings
}

// Delete deletes the leftovers (background propagation), namespaces last, and with wait
// returns when every one is gone.
func (c *Cleaner) Delete(ctx context.Context, items []Leftover, wait bool) error {
	d := c.d
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b Leftover) int {
		an, bn := a.Kind == "Namespace" && !a.namespaced, b.Kind == "Namespace" && !b.namespaced
		switch {
		case an == bn:
			return 0
		case an:
			return 1
		}
		return -1
	})
	background := metav1.DeletePropagationBackground
	var dels []deletion
	var errs []error
	for _, l := range items {
		ri := d.resourceFor(l.gvr, l.namespaced, l.Namespace)
		err := ri.Delete(ctx, l.Name, metav1.DeleteOptions{PropagationPolicy: &background})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %s", l, apiMessage(err)))
			continue
		}
		dels = append(dels, deletion{what: l.String(), ri: ri, name: l.Name})
	}
	if err := errors.Join(errs...); err != nil || !wait {
		return err
	}
	return d.waitGone(ctx, dels)
}
