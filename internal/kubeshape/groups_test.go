package kubeshape

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestGroupKinds checks names below the kinds of the groups labrun does not link, whose shapes
// come from groups.json.gz: a misspelled one is refused with did-you-mean, as a Deployment's.
func TestGroupKinds(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		want             string // the kind as the API spells it
		path             string
		at               int    // -1: every name is there
		msg              string // part of the message
	}{
		{"batch/v1", "Job", "Job", "status.succeeded", -1, ""},
		{"", "jobs", "Job", "status.succeded", 1, "has no field succeded (did you mean succeeded?)"},
		{"", "Job", "Job", "spec.template.spec.containers.0.image", -1, ""},
		{"", "Job", "Job", "spec.template.spec.containers.0.imag", 5, "did you mean image?"},
		{"", "Job", "Job", "status.conditions.0.lastTransitionTime", -1, ""},
		{"", "Job", "Job", "metadata.labels.anything", -1, ""},
		{"", "cronjob", "CronJob", "spec.jobTemplate.spec.backoffLimit", -1, ""},
		{"", "CronJob", "CronJob", "spec.schedul", 1, "did you mean schedule?"},
		{"networking.k8s.io/v1", "Ingress", "Ingress", "spec.rules.0.http.paths.0.backend.service.port.number", -1, ""},
		{"", "ingresses", "Ingress", "spec.rules.0.http.paths.0.pathTyp", 6, "did you mean pathType?"},
		{"", "Ingress", "Ingress", "status.loadBalancer.ingress.0.ip", -1, ""},
		{"", "networkpolicies", "NetworkPolicy", "spec.podSelector.matchLabels.app", -1, ""},
		{"", "NetworkPolicy", "NetworkPolicy", "spec.ingres", 1, "did you mean ingress?"},
		{"", "HorizontalPodAutoscaler", "HorizontalPodAutoscaler", "spec.metrics.0.resource.target.averageUtilization", -1, ""},
		{"", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "status.currentReplica", 1, "did you mean currentReplicas?"},
		{"autoscaling/v1", "HorizontalPodAutoscaler", "HorizontalPodAutoscaler", "spec.targetCPUUtilizationPercentage", -1, ""},
		{"", "HorizontalPodAutoscaler", "HorizontalPodAutoscaler", "spec.targetCPUUtilizationPercentage", 1, "has no field targetCPUUtilizationPercentage"}, // autoscaling/v2, the preferred version
		{"policy/v1", "PodDisruptionBudget", "PodDisruptionBudget", "spec.minAvailable", -1, ""},                                                            // IntOrString
		{"", "poddisruptionbudgets", "PodDisruptionBudget", "status.disruptionsAllowed", -1, ""},
		{"", "PodDisruptionBudget", "PodDisruptionBudget", "status.disruptionAllowed", 1, "did you mean disruptionsAllowed?"},
		{"", "EndpointSlice", "EndpointSlice", "endpoints.0.conditions.ready", -1, ""},
		{"", "endpointslices", "EndpointSlice", "endpoints.0.adresses", 2, "did you mean addresses?"},
		{"", "Lease", "Lease", "spec.holderIdentity", -1, ""},
		{"", "Lease", "Lease", "spec.renewTime.x", 2, "is a scalar"}, // MicroTime
		{"", "RoleBinding", "RoleBinding", "subjects.0.kind", -1, ""},
		{"", "ClusterRole", "ClusterRole", "rules.0.verb", 2, "did you mean verbs?"},
		{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "MutatingWebhookConfiguration", "webhooks.0.clientConfig.caBundle", -1, ""}, // []byte
		{"", "Event", "Event", "involvedObject.name", -1, ""},                                                                                           // core/v1's, before events.k8s.io/v1's
		{"events.k8s.io/v1", "Event", "Event", "regarding.name", -1, ""},
	} {
		sh, kind := Builtin(tc.apiVersion, tc.kind)
		if sh == nil || kind != tc.want {
			t.Errorf("Builtin(%q, %q) = %v, %q; want %s", tc.apiVersion, tc.kind, sh, kind, tc.want)
			continue
		}
		m := sh.Walk(strings.Split(tc.path, "."))
		switch {
		case tc.at < 0 && m != nil:
			t.Errorf("%s %s: %d %s, want every name there", tc.kind, tc.path, m.At, m.Msg)
		case tc.at >= 0 && m == nil:
			t.Errorf("%s %s: every name there, want a miss at %d", tc.kind, tc.path, tc.at)
		case tc.at >= 0 && (m.At != tc.at || !strings.Contains(m.Msg, tc.msg)):
			t.Errorf("%s %s: %d %q, want %d %q", tc.kind, tc.path, m.At, m.Msg, tc.at, tc.msg)
		}
	}
	for _, k := range [][2]string{{"batch/v1", "Deployment"}, {"apps/v1", "Job"}, {"networking.istio.io/v1", "Ingress"}, {"", "Gateway"}} {
		if sh, _ := Builtin(k[0], k[1]); sh != nil {
			t.Errorf("Builtin(%q, %q) is not nil", k[0], k[1])
		}
	}
}

// TestGroupShapesAreGoShapes compares what groups.json.gz decodes to with GoShape of the Go
// types (which this test links; labrun does not).
func TestGroupShapesAreGoShapes(t *testing.T) {
	for _, tc := range []struct {
		apiVersion string
		v          any
	}{
		{"batch/v1", batchv1.Job{}},
		{"batch/v1", batchv1.CronJob{}},
		{"networking.k8s.io/v1", networkingv1.Ingress{}},
		{"networking.k8s.io/v1", networkingv1.NetworkPolicy{}},
		{"autoscaling/v2", autoscalingv2.HorizontalPodAutoscaler{}},
		{"autoscaling/v1", autoscalingv1.HorizontalPodAutoscaler{}},
		{"policy/v1", policyv1.PodDisruptionBudget{}},
		{"rbac.authorization.k8s.io/v1", rbacv1.ClusterRole{}},
	} {
		ty := reflect.TypeOf(tc.v)
		got, _ := Builtin(tc.apiVersion, ty.Name())
		if got == nil {
			t.Errorf("Builtin(%q, %q) is nil", tc.apiVersion, ty.Name())
			continue
		}
		if path := differ(got, GoShape(ty), ty.Name(), map[[2]*Shape]bool{}); path != "" {
			t.Errorf("%s %s: groups.json.gz differs from GoShape at %s", tc.apiVersion, ty.Name(), path)
		}
	}
}

// differ is the first path where a and b differ, "" if none.
func differ(a, b *Shape, path string, seen map[[2]*Shape]bool) string {
	if seen[[2]*Shape{a, b}] {
		return ""
	}
	seen[[2]*Shape{a, b}] = true
	if a.Kind != b.Kind || len(a.Fields) != len(b.Fields) || (a.Elem == nil) != (b.Elem == nil) {
		return path
	}
	for name, f := range a.Fields {
		g := b.Fields[name]
		if g == nil {
			return path + "." + name
		}
		if p := differ(f, g, path+"."+name, seen); p != "" {
			return p
		}
	}
	if a.Elem != nil {
		return differ(a.Elem, b.Elem, path+"[]", seen)
	}
	return ""
}

// TestGroupShapesDecodeLazily: asking for a core/v1 kind, an apps/v1 kind or a custom resource
// does not decode groups.json.gz (vet pays for it only when a file gets a kind of those groups).
func TestGroupShapesDecodeLazily(t *testing.T) {
	if os.Getenv("KUBESHAPE_LAZY_CHILD") == "1" {
		Builtin("", "Pod")
		Builtin("apps/v1", "deployments")
		Builtin("", "DestinationRule")
		Builtin("networking.istio.io/v1", "Gateway")
		if groups.shapes != nil {
			t.Fatal("groups.json.gz was decoded for a core, apps or custom kind")
		}
		if sh, _ := Builtin("", "Job"); sh == nil || groups.shapes == nil {
			t.Fatal("Builtin(Job) did not decode groups.json.gz")
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestGroupShapesDecodeLazily$", "-test.count=1")
	cmd.Env = append(os.Environ(), "KUBESHAPE_LAZY_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestDecodeShapesRefusesBadData(t *testing.T) {
	if _, err := decodeShapes([]byte("not gzip")); err == nil {
		t.Error("decodeShapes(not gzip) did not err")
	}
	for _, nodes := range []string{`[[0]]`, `[[0],[4],{"a":7}]`, `[[0],[4],[2]]`, `[[0],[4],[5,1]]`, `[[0],[4],"x"]`} {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(nodes))
		zw.Close()
		if _, err := decodeShapes(b.Bytes()); err == nil {
			t.Errorf("decodeShapes(%s) did not err", nodes)
		}
	}
}

// BenchmarkDecodeShapes is what the first get of a kind of those groups costs vet.
func BenchmarkDecodeShapes(b *testing.B) {
	for b.Loop() {
		if _, err := decodeShapes(groupsData); err != nil {
			b.Fatal(err)
		}
	}
}
