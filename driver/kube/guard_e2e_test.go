package kube

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/schema"
)

// TestE2EGuardStrangers: what labrun did not create is not its to delete. A namespace that
// someone else made is never deleted, even when the scenario declares it (and applies it
// again); and of the objects a delete by kind finds, Owned keeps only the run's: those with its
// marks, those in a namespace it created, and those a controller made for them.
func TestE2EGuardStrangers(t *testing.T) {
	l := newLab(t, "e2e-guard-ours")
	theirs := "e2e-guard-theirs"
	if _, err := l.cs.CoreV1().Namespaces().Create(l.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: theirs}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.cs.CoreV1().Namespaces().Delete(l.ctx, theirs, metav1.DeleteOptions{}) })
	// A run that may change both namespaces.
	run := newLab(t, "e2e-guard-run", func(o *Options) {
		o.AllowedNamespaces = []string{"e2e-guard-run", theirs, l.ns}
		o.Run = Run{ID: "guard-run", Scenario: "guard", Host: "e2e", PID: 1}
	})
	if res, err := run.tgt.Cluster.Apply(l.ctx, []schema.Object{namespace(theirs)}, nil, ""); err != nil || len(res.Created) != 0 {
		t.Fatalf("apply of their namespace: %+v, %v (want applied, not created)", res, err)
	}
	err := run.tgt.Cluster.Delete(l.ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: theirs}}, false)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "never deletes a namespace it did not create") {
		t.Errorf("delete of their namespace: %v, want a refusal", err)
	}
	if ns, err := l.cs.CoreV1().Namespaces().Get(l.ctx, theirs, metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Fatalf("their namespace after the refused delete: %v, %v", ns, err)
	}

	// In their namespace: their ConfigMap, the run's ConfigMap and the run's Deployment, whose
	// ReplicaSet and Pods the controllers make (owned through owner references).
	if _, err := l.cs.CoreV1().ConfigMaps(theirs).Create(l.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Labels: map[string]string{"app": "web"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run.tgt.Cluster.Apply(l.ctx, []schema.Object{configMap("ours", map[string]any{"app": "web"}, nil), deployment("web", 2, "app")}, nil, theirs); err != nil {
		t.Fatal(err)
	}
	if err := run.tgt.Cluster.WaitRollout(l.ctx, theirs, "web"); err != nil {
		t.Fatal(err)
	}
	pods, err := l.cs.CoreV1().Pods(theirs).List(l.ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pods: %v, %v", pods, err)
	}
	refs := []schema.ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: theirs, Name: "theirs"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: theirs, Name: "ours"},
		{APIVersion: "v1", Kind: "Pod", Namespace: theirs, Name: pods.Items[0].Name},
		{APIVersion: "v1", Kind: "Pod", Namespace: theirs, Name: pods.Items[1].Name},
	}
	owned, err := run.d.Owned(l.ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	if want := refs[1:]; !slices.Equal(owned, want) {
		t.Errorf("owned %v, want %v (not their ConfigMap)", owned, want)
	}
	// Another run (another ID) owns none of them; everything in the namespace the lab created
	// is the lab's.
	if owned, err := l.d.Owned(l.ctx, refs); err != nil || len(owned) != 0 {
		t.Errorf("another run owns %v (%v), want none", owned, err)
	}
	l.apply([]schema.Object{configMap("x", nil, nil)})
	if _, err := l.cs.CoreV1().ConfigMaps(l.ns).Create(l.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mine := []schema.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: l.ns, Name: "x"}, {APIVersion: "v1", Kind: "ConfigMap", Namespace: l.ns, Name: "y"}}
	if owned, err := l.d.Owned(l.ctx, mine); err != nil || len(owned) != 2 {
		t.Errorf("in the namespace the run created: owned %v (%v), want both", owned, err)
	}
}

// TestE2EGuardSystemNamespaces: the driver refuses a system namespace even when it is among the
// allowed namespaces, unless it is also among SystemNamespaces (the scenario's opt-in, given with
// --allow-system-namespaces).
func TestE2EGuardSystemNamespaces(t *testing.T) {
	cm := configMap("labrun-e2e-system", nil, nil)
	refused := newLab(t, "e2e-guard-sys", func(o *Options) { o.AllowedNamespaces = []string{"e2e-guard-sys", "default"} })
	_, err := refused.tgt.Cluster.Apply(refused.ctx, []schema.Object{cm}, nil, "default")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "it is a system namespace") {
		t.Errorf("apply in default without the opt-in: %v, want a refusal naming the system namespace", err)
	}
	if _, err := refused.cs.CoreV1().ConfigMaps("default").Get(refused.ctx, "labrun-e2e-system", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap was created in default: %v", err)
	}
	allowed := newLab(t, "e2e-guard-sys2", func(o *Options) {
		o.AllowedNamespaces = []string{"e2e-guard-sys2", "default"}
		o.SystemNamespaces = []string{"default"}
	})
	if _, err := allowed.tgt.Cluster.Apply(allowed.ctx, []schema.Object{cm}, nil, "default"); err != nil {
		t.Fatalf("apply in default with the opt-in: %v", err)
	}
	if err := allowed.tgt.Cluster.Delete(allowed.ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "labrun-e2e-system"}}, true); err != nil {
		t.Fatal(err)
	}
}
