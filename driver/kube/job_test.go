package kube

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// TestRenderJobDecodesStrictly: every object RenderJob renders decodes into its Kubernetes
// type with no unknown field (the API server's own check is cmd/labrun/jobe2e's server-side
// dry run), and the Job runs the shards as labrun job promises: Indexed, one completion per
// shard, the shard from the completion index, the scenarios mounted from the ConfigMap.
func TestRenderJobDecodesStrictly(t *testing.T) {
	spec := JobSpec{
		Name: "suite", Namespace: "labrun", Image: "labrun:dev", Shards: 4, Parallelism: 2,
		Files:      []JobFile{{Path: "lab/a.cue", Data: "package lab\n"}, {Path: "lab/b c.cue", Data: "package lab\n"}},
		Args:       []string{"--count", "2", "lab"},
		Namespaces: map[string][]JobRule{"one": {{Group: "", Resources: []string{"pods"}, Verbs: []string{"get"}}}},
		Cluster:    []JobRule{{Group: "", Resources: []string{"namespaces"}, ResourceNames: []string{"one"}, Verbs: []string{"delete"}}},
	}
	kinds := map[string]int{}
	var job batchv1.Job
	var cm corev1.ConfigMap
	for _, o := range RenderJob(spec) {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		kind, _ := o["kind"].(string)
		kinds[kind]++
		var into any
		switch kind {
		case "ServiceAccount":
			into = &corev1.ServiceAccount{}
		case "ConfigMap":
			into = &cm
		case "Role":
			into = &rbacv1.Role{}
		case "RoleBinding":
			into = &rbacv1.RoleBinding{}
		case "ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding":
			into = &rbacv1.ClusterRoleBinding{}
		case "Job":
			into = &job
		default:
			t.Fatalf("unexpected kind %q", kind)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Errorf("%s: %v\n%s", kind, err, b)
		}
	}
	want := map[string]int{"ServiceAccount": 1, "ConfigMap": 1, "Role": 1, "RoleBinding": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Job": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 2 || *s.BackoffLimitPerIndex != 0 {
		t.Errorf("job spec: %+v", s)
	}
	c := s.Template.Spec.Containers[0]
	wantArgs := []string{"run", "--output", "json", "--report-dir", "", "--shard", "job/4", "--count", "2", "lab"}
	if len(c.Args) != len(wantArgs) {
		t.Fatalf("args %q, want %q", c.Args, wantArgs)
	}
	for i := range c.Args {
		if c.Args[i] != wantArgs[i] {
			t.Errorf("args %q, want %q", c.Args, wantArgs)
		}
	}
	var mounted []string
	for _, v := range s.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			for _, it := range v.ConfigMap.Items {
				if _, ok := cm.Data[it.Key]; !ok {
					t.Errorf("item %s: no such key in the ConfigMap", it.Key)
				}
				mounted = append(mounted, it.Path)
			}
		}
	}
	if len(mounted) != 2 || mounted[0] != "lab/a.cue" || mounted[1] != "lab/b c.cue" {
		t.Errorf("mounted %v", mounted)
	}
}

// TestRenderJobLongPathKey: a ConfigMap key is at most 253 characters (the API server's
// IsConfigMapKey); a scenario file's path is not. The key of a long path was its whole path,
// and kubectl apply refused the ConfigMap. Each key is still its own (its index) and names
// the file's tail.
func TestRenderJobLongPathKey(t *testing.T) {
	long := strings.Repeat("a-rather-long-folder-name/", 12) + "scenario.cue"
	spec := JobSpec{Name: "suite", Namespace: "labrun", Image: "labrun:dev", Shards: 1, Parallelism: 1,
		Files: []JobFile{{Path: long, Data: "package lab\n"}, {Path: "lab/a.cue", Data: "package lab\n"}}}
	for _, o := range RenderJob(spec) {
		if o["kind"] != "ConfigMap" {
			continue
		}
		data := o["data"].(map[string]any)
		if len(data) != 2 {
			t.Errorf("%d keys, want 2", len(data))
		}
		for k := range data {
			if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
				t.Errorf("key %q: %v", k, errs)
			}
		}
		if _, ok := data["f1-lab_a.cue"]; !ok {
			t.Errorf("keys %v, want f1-lab_a.cue among them", data)
		}
	}
}
