package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/schema"
)

// TestPickPodTellsTheReplicas: a selector that matches several ready pods picks the first by
// name, and tells the step (schema.NotePodPick) which it used and which ready pods it matched,
// so that a snapshot of one replica of three says it read one; a pod that is not ready is not
// among them, and a pod by name tells nothing (the scenario named it). The API server is a
// loopback stand-in.
func TestPickPodTellsTheReplicas(t *testing.T) {
	pod := func(name string, ready bool) corev1.Pod {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		return corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "lab", Labels: map[string]string{"app": "backend"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
		}
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{
		pod("backend-c", true), pod("backend-b", true), pod("backend-0", false), pod("backend-d", true),
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/lab/pods":
			_ = json.NewEncoder(w).Encode(list)
		case "/api/v1/namespaces/lab/pods/backend-d":
			_ = json.NewEncoder(w).Encode(list.Items[3])
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	d := standinDriver(t, srv.URL)
	var picks []schema.PodPick
	ctx := schema.WithPodPicks(context.Background(), func(p schema.PodPick) { picks = append(picks, p) })
	p, err := d.pickPod(ctx, "lab", "", "app=backend", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.PodPick{{Namespace: "lab", Selector: "app=backend", Used: []string{"backend-b"}, Ready: []string{"backend-b", "backend-c", "backend-d"}}}
	if p.Name != "backend-b" || !reflect.DeepEqual(picks, want) {
		t.Errorf("by selector: picked %s, told %+v; want backend-b, %+v", p.Name, picks, want)
	}
	picks = nil
	if p, err = d.pickPod(ctx, "lab", "backend-d", "", false); err != nil || p.Name != "backend-d" || len(picks) != 0 {
		t.Errorf("by name: %v, %v, told %+v; want backend-d and nothing told", p, err, picks)
	}
}
