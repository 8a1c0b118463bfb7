package kube

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestDeletionStateNamesFinalizers: the state a deletion wait gives up on is written as
// interp's Record.LeftBehind reads it ("deletion started <time>, finalizers a,b"), which then
// says that finalizers hold the leftover and what removes them instead of labrun clean: a
// change of these words must change that reader too.
func TestDeletionStateNamesFinalizers(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	ts := metav1.NewTime(time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC))
	u.SetDeletionTimestamp(&ts)
	u.SetFinalizers([]string{"example.com/hold", "example.com/two"})
	if got, want := deletionState(u), "deletion started 2026-12-07T11:00:00Z, finalizers example.com/hold,example.com/two"; got != want {
		t.Errorf("deletionState = %q, want %q", got, want)
	}
}
