package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScenarioLabel(t *testing.T) {
	long := strings.Repeat("a", 80)
	for _, name := range []string{"s", "conn_lab", "kit-b.mode2", "_x_", "with space", "ünïcode", long, long + "b", ""} {
		got := ScenarioLabel(name)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 || got == "" {
			t.Errorf("ScenarioLabel(%q) = %q: %v", name, got, errs)
		}
	}
	if ScenarioLabel("conn_lab") != "conn_lab" {
		t.Errorf("a valid name was changed: %q", ScenarioLabel("conn_lab"))
	}
	if ScenarioLabel(long) == ScenarioLabel(long+"b") {
		t.Error("two long names share a label")
	}
}

func TestOwnerRoundTrip(t *testing.T) {
	r := Run{ID: "abc", Scenario: "s", Host: "h1", PID: 42, PIDStart: 777}
	host, pid, start, ok := ParseOwner(r.Owner())
	if !ok || host != "h1" || pid != 42 || start != 777 {
		t.Errorf("ParseOwner(%q) = %q %d %d %v", r.Owner(), host, pid, start, ok)
	}
	if _, _, _, ok := ParseOwner("garbage"); ok {
		t.Error("garbage parsed as an owner")
	}
}

// An object the run creates gets its marks; one an earlier run created keeps that run's marks
// when applied again (server-side apply would drop them otherwise); the user's own object
// gets none.
func TestStampAndKeepMarks(t *testing.T) {
	run := Run{ID: "r2", Scenario: "s", Host: "h", PID: 2}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "a"}}}}
	run.stamp(u)
	if l := u.GetLabels(); l[LabelRun] != "r2" || l[LabelScenario] != "s" || l["app"] != "a" {
		t.Errorf("labels %v", l)
	}
	if a := u.GetAnnotations(); a[AnnotationOwner] != run.Owner() {
		t.Errorf("annotations %v", a)
	}

	again := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	keepMarks(u, again)
	if again.GetLabels()[LabelRun] != "r2" || again.GetAnnotations()[AnnotationOwner] != run.Owner() {
		t.Errorf("marks not kept: %v %v", again.GetLabels(), again.GetAnnotations())
	}

	users := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": "a"}}}}
	mine := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	keepMarks(users, mine)
	if len(mine.GetLabels()) != 0 || len(mine.GetAnnotations()) != 0 {
		t.Errorf("the user's object got marks: %v %v", mine.GetLabels(), mine.GetAnnotations())
	}
}
