package schema

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// listCluster is a cluster whose Get lists the objects given, whose Owned keeps those named
// in owned (all when owned is nil), and whose Delete records refs.
type listCluster struct {
	Cluster
	objects []any
	owned   map[string]bool
	got     *Get
	deleted *[]ObjectRef
}

func (c listCluster) Owned(_ context.Context, refs []ObjectRef) ([]ObjectRef, error) {
	if c.owned == nil {
		return refs, nil
	}
	var out []ObjectRef
	for _, r := range refs {
		if c.owned[r.Name] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (c listCluster) Get(_ context.Context, req Get) (any, error) {
	*c.got = req
	return c.objects, nil
}

func (c listCluster) Delete(_ context.Context, refs []ObjectRef, _ bool) error {
	*c.deleted = refs
	return nil
}

type deleteRuntime struct {
	Runtime
	cl       Cluster
	warnings []string
	cleanup  bool
}

func (r *deleteRuntime) InCleanup() bool        { return r.cleanup }
func (r *deleteRuntime) SawObjects([]ObjectRef) {}

func (r *deleteRuntime) Target() *Target            { return &Target{Cluster: r.cl} }
func (r *deleteRuntime) Namespace(ns string) string { return "lab" }
func (r *deleteRuntime) Warn(msg string)            { r.warnings = append(r.warnings, msg) }

func obj(kind, ns, name string) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md}
}

// TestDeleteByKind: a delete by kind deletes what the cluster lists of that kind in the step's
// namespace (the selector passed on) that the run created, or all with all; none is a warning;
// a cluster-scoped kind is refused before anything is deleted.
func TestDeleteByKind(t *testing.T) {
	var got Get
	var deleted []ObjectRef
	cl := listCluster{objects: []any{obj("Pod", "lab", "a"), obj("Pod", "lab", "b")}, got: &got, deleted: &deleted}
	rt := &deleteRuntime{cl: cl}
	if err := (&Delete{Kind: "Pod", Selector: "app=web"}).Run(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	if want := (Get{Kind: "Pod", Selector: "app=web", Namespace: "lab"}); got != want {
		t.Errorf("listed %+v, want %+v", got, want)
	}
	want := []ObjectRef{{"v1", "Pod", "lab", "a"}, {"v1", "Pod", "lab", "b"}}
	if !reflect.DeepEqual(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}

	deleted = nil
	rt = &deleteRuntime{cl: listCluster{got: &got, deleted: &deleted}}
	if err := (&Delete{Kind: "Pod"}).Run(context.Background(), rt); err != nil || deleted != nil {
		t.Fatalf("err %v, deleted %v", err, deleted)
	}
	if len(rt.warnings) != 1 || rt.warnings[0] != "no Pod in lab: nothing to delete" {
		t.Errorf("warnings %q", rt.warnings)
	}

	// Only what the run created, unless all: the rest is kept and the step says so.
	deleted = nil
	cl.owned = map[string]bool{"b": true}
	rt = &deleteRuntime{cl: cl}
	if err := (&Delete{Kind: "Pod", Selector: "app=web"}).Run(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	if want := []ObjectRef{{"v1", "Pod", "lab", "b"}}; !reflect.DeepEqual(deleted, want) {
		t.Errorf("deleted %v, want %v (only what the run created)", deleted, want)
	}
	if len(rt.warnings) != 1 || rt.warnings[0] != "1 Pod {app=web} in lab not created by this run kept (all: true deletes them)" {
		t.Errorf("warnings %q", rt.warnings)
	}
	deleted = nil
	cl.owned = map[string]bool{}
	rt = &deleteRuntime{cl: cl}
	if err := (&Delete{Kind: "Pod"}).Run(context.Background(), rt); err != nil || deleted != nil {
		t.Fatalf("err %v, deleted %v (none created by the run)", err, deleted)
	}
	if len(rt.warnings) != 1 || rt.warnings[0] != "2 Pod in lab, none created by this run: nothing deleted (all: true deletes them)" {
		t.Errorf("warnings %q", rt.warnings)
	}
	if err := (&Delete{Kind: "Pod", All: true}).Run(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 2 {
		t.Errorf("all: true deleted %v, want both", deleted)
	}

	deleted = nil
	rt = &deleteRuntime{cl: listCluster{objects: []any{obj("ClusterRole", "", "admin")}, got: &got, deleted: &deleted}}
	err := (&Delete{Kind: "ClusterRole"}).Run(context.Background(), rt)
	if err == nil || !strings.Contains(err.Error(), "ClusterRole is cluster-scoped: delete by kind is for namespaced kinds") || deleted != nil {
		t.Errorf("err %v, deleted %v", err, deleted)
	}
}

// absentCluster is a cluster where only the objects listed exist: Delete of the others is an
// *AbsentError, as the kube driver's is.
type absentCluster struct {
	listCluster
}

func (c absentCluster) Objects(_ context.Context, objs []Object, _ []string, ns string) ([]ObjectRef, error) {
	var out []ObjectRef
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		r := ObjectRef{APIVersion: o["apiVersion"].(string), Kind: o["kind"].(string), Namespace: ns}
		r.Name, _ = md["name"].(string)
		out = append(out, r)
	}
	return out, nil
}

func (c absentCluster) Delete(_ context.Context, refs []ObjectRef, _ bool) error {
	exists := map[string]bool{}
	for _, o := range c.objects {
		md := o.(map[string]any)["metadata"].(map[string]any)
		exists[md["name"].(string)] = true
	}
	var absent []ObjectRef
	for _, r := range refs {
		if exists[r.Name] {
			*c.deleted = append(*c.deleted, r)
		} else {
			absent = append(absent, r)
		}
	}
	if len(absent) > 0 {
		return &AbsentError{Absent: absent, All: len(absent) == len(refs)}
	}
	return nil
}

// TestDeleteNotFound: as kubectl delete does, a delete step of an object that is not found
// fails (a typo "webb" of "web" passed, deleting nothing), naming the object and the one of
// its kind whose name is close; so does a delete by selector that picks none. ignoreNotFound,
// or a cleanup step, takes them as deleted, with a warning.
func TestDeleteNotFound(t *testing.T) {
	dep := func(name string) Object {
		return Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name}}
	}
	var got Get
	var deleted []ObjectRef
	web := obj("Deployment", "lab", "web")
	cl := absentCluster{listCluster{objects: []any{web}, got: &got, deleted: &deleted}}

	rt := &deleteRuntime{cl: cl}
	err := (&Delete{Objects: []Object{dep("webb")}}).Run(context.Background(), rt)
	if want := "Deployment webb not found in namespace lab (did you mean web?): nothing was deleted; ignoreNotFound: true if it may be gone already"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	if want := (Get{Kind: "Deployment", APIVersion: "apps/v1", Namespace: "lab"}); got != want {
		t.Errorf("listed %+v for the suggestion, want %+v", got, want)
	}
	err = (&Delete{Objects: []Object{dep("web"), dep("zzz")}}).Run(context.Background(), rt)
	if want := "Deployment zzz not found in namespace lab: the others were deleted; ignoreNotFound: true if it may be gone already"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	if len(deleted) != 1 || deleted[0].Name != "web" {
		t.Errorf("deleted %v, want web", deleted)
	}

	for _, rt := range []*deleteRuntime{{cl: cl, cleanup: true}, {cl: cl}} {
		d := &Delete{Objects: []Object{dep("webb")}, IgnoreNotFound: !rt.cleanup}
		if err := d.Run(context.Background(), rt); err != nil {
			t.Errorf("cleanup %v, ignoreNotFound %v: %v", rt.cleanup, d.IgnoreNotFound, err)
		}
		if len(rt.warnings) != 1 || rt.warnings[0] != "nothing to delete: already gone" {
			t.Errorf("warnings %q", rt.warnings)
		}
	}

	// By selector: none picked fails the step; ignoreNotFound or cleanup warn.
	empty := listCluster{got: &got, deleted: &deleted}
	err = (&Delete{Kind: "Pod", Selector: "app=webb"}).Run(context.Background(), &deleteRuntime{cl: empty})
	if want := "no Pod {app=webb} in namespace lab: nothing to delete (ignoreNotFound: true if none may be left)"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	for _, rt := range []*deleteRuntime{{cl: empty, cleanup: true}, {cl: empty}} {
		d := &Delete{Kind: "Pod", Selector: "app=webb", IgnoreNotFound: !rt.cleanup}
		if err := d.Run(context.Background(), rt); err != nil {
			t.Errorf("cleanup %v, ignoreNotFound %v: %v", rt.cleanup, d.IgnoreNotFound, err)
		}
		if len(rt.warnings) != 1 || rt.warnings[0] != "no Pod {app=webb} in lab: nothing to delete" {
			t.Errorf("warnings %q", rt.warnings)
		}
	}
}
