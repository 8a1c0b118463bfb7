package kube

import (
	"strings"
	"testing"
)

func TestMatchPartial(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":        "backend",
			"labels":      map[string]any{"app": "backend"},
			"annotations": map[string]any{"example.com/owner": "team-a"},
		},
		"spec": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "app:1", "ports": []any{map[string]any{"containerPort": int64(8080)}}},
				map[string]any{"name": "sidecar", "image": "proxy:1"},
			}}},
		},
		"status": map[string]any{
			"conditions": []any{
				map[string]any{"type": "Progressing", "status": "True"},
				map[string]any{"type": "Available", "status": "False"},
			},
		},
	}
	containers := func(cs ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}}
	}
	for _, tc := range []struct {
		name     string
		want     map[string]any
		anyOrder bool
		diffs    []string
	}{
		{name: "empty matches anything", want: map[string]any{}},
		{name: "a field, int against float", want: map[string]any{"spec": map[string]any{"replicas": 2.0}}},
		{name: "a field that differs", want: map[string]any{"spec": map[string]any{"replicas": 3}},
			diffs: []string{"spec.replicas: want 3, got 2"}},
		{name: "a field that is not there", want: map[string]any{"status": map[string]any{"readyReplicas": 2}},
			diffs: []string{"status.readyReplicas: want 2, got no field"}},
		{name: "null wants no field", want: map[string]any{"status": map[string]any{"readyReplicas": nil}}},
		{name: "null against a value", want: map[string]any{"spec": map[string]any{"replicas": nil}},
			diffs: []string{"spec.replicas: want null or no field, got 2"}},
		{name: "a struct against a scalar", want: map[string]any{"spec": map[string]any{"replicas": map[string]any{"x": 1}}},
			diffs: []string{"spec.replicas: want a struct, got 2"}},
		{name: "a key that needs quoting", want: map[string]any{"metadata": map[string]any{"annotations": map[string]any{"example.com/owner": "team-b"}}},
			diffs: []string{`metadata.annotations["example.com/owner"]: want "team-b", got "team-a"`}},
		{name: "a list element-wise, partial elements", want: containers(map[string]any{"name": "app"}, map[string]any{"image": "proxy:1"})},
		{name: "a list in the wrong order", want: containers(map[string]any{"name": "sidecar"}, map[string]any{"name": "app"}),
			diffs: []string{
				`spec.template.spec.containers[0].name: want "sidecar", got "app"`,
				`spec.template.spec.containers[1].name: want "app", got "sidecar"`,
			}},
		{name: "a list in any order", anyOrder: true, want: containers(map[string]any{"name": "sidecar"}, map[string]any{"name": "app"})},
		{name: "a shorter list in order must have every element", want: containers(map[string]any{"name": "app"}),
			diffs: []string{"spec.template.spec.containers: want a list of 1, got 2 elements"}},
		{name: "a shorter list in any order is a subset", anyOrder: true, want: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": "False"}}}}},
		{name: "any order: an element that none matches", anyOrder: true, want: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": "True"}}}},
			diffs: []string{`status.conditions[0]: want {"status":"True","type":"Available"} in any element, got none of 2 elements`}},
		{name: "any order: two wanted elements for one", anyOrder: true, want: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"status": "True"}, map[string]any{"type": "Progressing"}}}},
			diffs: []string{"status.conditions: want 2 different elements matching, got some match only the same elements"}},
		{name: "any order nests into elements", anyOrder: true, want: containers(map[string]any{"ports": []any{map[string]any{"containerPort": 8080}}})},
		{name: "a list against a struct", want: map[string]any{"spec": []any{}},
			diffs: []string{"spec: want a list, got " + render(obj["spec"])}},
		{name: "several differences in path order", want: map[string]any{"spec": map[string]any{"replicas": 1}, "metadata": map[string]any{"name": "other"}},
			diffs: []string{`metadata.name: want "other", got "backend"`, "spec.replicas: want 1, got 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range matchPartial(tc.want, obj, tc.anyOrder) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.diffs, "\n") {
				t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.diffs, "\n"))
			}
		})
	}
}

func TestDescribeDiffsCuts(t *testing.T) {
	diffs := []fieldDiff{{"a", "1", "2"}, {"b", "1", "2"}, {"c", "1", "2"}}
	if got, want := describeDiffs(diffs, 2), "a: want 1, got 2; b: want 1, got 2; and 1 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A Secret's data never shows in a difference: neither the value found nor the one wanted
// (which may come from a secret var), nor in the whole object; other fields still do.
func TestMatchPartialHidesSecretData(t *testing.T) {
	secret := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "labels": map[string]any{"app": "db"}},
		"data":     map[string]any{"password": "aHVudGVyMg=="},
		"type":     "Opaque",
	}
	for _, tc := range []struct {
		want any
		diff string
	}{
		{map[string]any{"data": map[string]any{"password": "c2VjcmV0"}}, "data.password: want (Secret data, not shown), got (Secret data, not shown)"},
		{map[string]any{"data": map[string]any{"user": "YQ=="}}, "data.user: want (Secret data, not shown), got no field"},
		{map[string]any{"stringData": map[string]any{"password": "secret"}}, "stringData: want (Secret data, not shown), got no field"},
		{map[string]any{"data": []any{}}, "data: want a list, got (Secret data, not shown)"},
		{map[string]any{"type": "kubernetes.io/tls"}, `type: want "kubernetes.io/tls", got "Opaque"`},
	} {
		var got []string
		for _, d := range matchPartial(tc.want, secret, false) {
			got = append(got, d.String())
		}
		if s := strings.Join(got, "; "); s != tc.diff {
			t.Errorf("%v: %s, want %s", tc.want, s, tc.diff)
		}
	}
	root := matcher{secret: true}.show("", secret)
	if strings.Contains(root, "aHVudGVyMg") || !strings.Contains(root, `"data":"(Secret data, not shown)"`) {
		t.Errorf("the whole Secret: %s", root)
	}
}

// TestMatchPartialQuantities: the API server returns quantities canonical (cpu "0.5" as 500m,
// memory 1024Mi as 1Gi), so a quantity field compares as a quantity: written as "0.5" it never
// equalled the server's 500m, and an absence of it held at once (probe p14 #07b).
func TestMatchPartialQuantities(t *testing.T) {
	res := func(requests map[string]any) map[string]any {
		return map[string]any{"resources": map[string]any{"requests": requests}}
	}
	containers := func(cs ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}}
	}
	withName := func(c map[string]any, name string) map[string]any {
		c["name"] = name
		return c
	}
	dep := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}
	for k, v := range containers(withName(res(map[string]any{"cpu": "500m", "memory": "1Gi"}), "w"), withName(res(map[string]any{"cpu": "1"}), "s")) {
		dep[k] = v
	}
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
		"spec":   map[string]any{"containers": []any{withName(res(map[string]any{"cpu": "2"}), "w")}},
		"status": map[string]any{"phase": "0.5"}}
	hpaTarget := func(v string) map[string]any {
		return map[string]any{"spec": map[string]any{"metrics": []any{map[string]any{"resource": map[string]any{"target": map[string]any{"averageValue": v}}}}}}
	}
	hpa := map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web"}}
	for k, v := range hpaTarget("500m") {
		hpa[k] = v
	}
	crd := map[string]any{"apiVersion": "lab.example/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": "1Gi", "version": "1.0"}}
	crdList := map[string]any{"apiVersion": "lab.example/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"sizes": []any{"1Gi", "2Gi"}}}
	for _, tc := range []struct {
		name     string
		obj      map[string]any
		want     map[string]any
		anyOrder bool
		custom   bool
		diffs    []string
	}{
		{name: "0.5 is 500m, 1024Mi is 1Gi", obj: dep, want: containers(res(map[string]any{"cpu": "0.5", "memory": "1024Mi"}), map[string]any{})},
		{name: "a number is its quantity", obj: dep, want: containers(map[string]any{}, res(map[string]any{"cpu": 1}))},
		{name: "1000m is 1", obj: dep, want: containers(map[string]any{}, res(map[string]any{"cpu": "1000m"}))},
		{name: "in any order", obj: dep, anyOrder: true, want: containers(res(map[string]any{"cpu": 1.0}), res(map[string]any{"cpu": "0.5"}))},
		{name: "a Pod's", obj: pod, want: map[string]any{"spec": map[string]any{"containers": []any{res(map[string]any{"cpu": 2})}}}},
		{name: "another quantity differs", obj: dep, want: containers(res(map[string]any{"cpu": "0.6", "memory": "1G"}), map[string]any{}),
			diffs: []string{
				`spec.template.spec.containers[0].resources.requests.cpu: want "0.6", got "500m"`,
				`spec.template.spec.containers[0].resources.requests.memory: want "1G", got "1Gi"`,
			}},
		{name: "in any order, another quantity differs", obj: dep, anyOrder: true, want: containers(res(map[string]any{"cpu": "0.6"})),
			diffs: []string{`spec.template.spec.containers[0]: want {"resources":{"requests":{"cpu":"0.6"}}} in any element, got none of 2 elements`}},
		{name: "a quantity that does not parse differs", obj: dep, want: containers(res(map[string]any{"cpu": "0.5 cores"}), map[string]any{}),
			diffs: []string{`spec.template.spec.containers[0].resources.requests.cpu: want "0.5 cores", got "500m"`}},
		{name: "a string field is no quantity", obj: pod, want: map[string]any{"status": map[string]any{"phase": "500m"}},
			diffs: []string{`status.phase: want "500m", got "0.5"`}},
		// Another group's quantity is typed as core/v1's is (an HPA's averageValue "0.5" is the
		// server's "500m"; before, it never matched, and an absence of it held at once); a
		// field whose type labrun does not know (a CRD without a schema): two quantities, one
		// with a suffix, compare as quantities.
		{name: "autoscaling/v2: 0.5 is 500m", obj: hpa, want: hpaTarget("0.5")},
		{name: "autoscaling/v2: 1 is \"1\"", obj: func() map[string]any {
			o := map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}
			for k, v := range hpaTarget("1") {
				o[k] = v
			}
			return o
		}(), want: map[string]any{"spec": map[string]any{"metrics": []any{map[string]any{"resource": map[string]any{"target": map[string]any{"averageValue": 1}}}}}}},
		{name: "a CRD without a schema: 1024Mi is 1Gi", obj: crd, want: map[string]any{"spec": map[string]any{"size": "1024Mi"}}},
		{name: "autoscaling/v2: another quantity differs", obj: hpa, want: hpaTarget("0.6"),
			diffs: []string{`spec.metrics[0].resource.target.averageValue: want "0.6", got "500m"`}},
		{name: "untyped numbers without a suffix compare as written", obj: crd, want: map[string]any{"spec": map[string]any{"version": "1"}},
			diffs: []string{`spec.version: want "1", got "1.0"`}},
		// A custom resource whose CRD the wait read: the API server keeps its fields as
		// written, quantities too, so "1024Mi" is not its "1Gi" (nor is it in Chainsaw or
		// KUTTL, which compare as written); a match of it held where theirs fails.
		{name: "a custom resource: 1024Mi is not 1Gi", obj: crd, custom: true, want: map[string]any{"spec": map[string]any{"size": "1024Mi"}},
			diffs: []string{`spec.size: want "1024Mi", got "1Gi"`}},
		{name: "a custom resource: in any order, 1024Mi is not 1Gi", obj: crdList, custom: true, anyOrder: true,
			want:  map[string]any{"spec": map[string]any{"sizes": []any{"1024Mi"}}},
			diffs: []string{`spec.sizes[0]: want "1024Mi" in any element, got none of 2 elements`}},
		{name: "a custom resource: 1Gi is 1Gi", obj: crd, custom: true, want: map[string]any{"spec": map[string]any{"size": "1Gi"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range matchObject(tc.want, tc.obj, tc.anyOrder, tc.custom) {
				got = append(got, d.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.diffs, "\n") {
				t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.diffs, "\n"))
			}
		})
	}
}

// TestMatchPartialAgainstChainsawAndKUTTL compares labrun's verdict on a partial object with
// the verdicts of the tools whose assert and errors files labrun runs (wait: matchFiles,
// absentFiles), as their source says (read, not run: Chainsaw at v0.2.15-beta.4, whose
// assertion trees are kyverno-json's pkg/core/assertion and matching; KUTTL at v0.26.0,
// internal/utils/subset.go IsSubset). An object stands in for the API server's answer. Only
// labrun's verdict is computed; a row where it differs from another tool's says why, and the
// test refuses a difference left unexplained. "error" is a verdict that fails the other
// tool's assert and its error (absence) operation alike.
func TestMatchPartialAgainstChainsawAndKUTTL(t *testing.T) {
	dep := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "app:1", "args": []any{"a", "b"},
					"resources": map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Gi"}}},
				map[string]any{"name": "sidecar", "image": "proxy:1"},
			}}},
		},
		"status": map[string]any{"observedGeneration": int64(1)},
	}
	widget := map[string]any{"apiVersion": "lab.example/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": "1Gi", "enabled": true, "count": int64(9007199254740992)}}
	containers := func(cs ...any) map[string]any {
		return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}}
	}
	const match, no, errs = "match", "no match", "error"
	for _, tc := range []struct {
		name                    string
		obj                     map[string]any
		custom                  bool
		want                    map[string]any
		labrun, chainsaw, kuttl string
		why                     string // where labrun's verdict is not both of the others'
	}{
		// lists
		{name: "a list, element by element, partial elements", obj: dep,
			want:   containers(map[string]any{"name": "app"}, map[string]any{"image": "proxy:1"}),
			labrun: match, chainsaw: match, kuttl: match},
		{name: "a shorter list", obj: dep, want: containers(map[string]any{"name": "app"}),
			labrun: no, chainsaw: no, kuttl: no},
		{name: "a list in another order", obj: dep, want: containers(map[string]any{"name": "sidecar"}, map[string]any{"name": "app"}),
			labrun: no, chainsaw: no, kuttl: no},
		{name: "a list of scalars, one short", obj: dep, want: containers(map[string]any{"args": []any{"a"}}, map[string]any{}),
			labrun: no, chainsaw: no, kuttl: no},
		// structs
		{name: "a struct is a subset", obj: dep, want: map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}},
			labrun: match, chainsaw: match, kuttl: match},
		{name: "a field the object has not", obj: dep, want: map[string]any{"status": map[string]any{"readyReplicas": 2}},
			labrun: no, chainsaw: no, kuttl: no},
		{name: "{} on a struct", obj: dep, want: map[string]any{"metadata": map[string]any{"labels": map[string]any{}}},
			labrun: match, chainsaw: match, kuttl: match},
		{name: "{} on a field the object has not", obj: dep, want: map[string]any{"metadata": map[string]any{"annotations": map[string]any{}}},
			labrun: no, chainsaw: no, kuttl: no},
		{name: "{} on a number", obj: dep, want: map[string]any{"spec": map[string]any{"replicas": map[string]any{}}},
			labrun: no, chainsaw: match, kuttl: no,
			why: "Chainsaw's empty map asks only for a value that is not null; {} asks for a struct"},
		// null and empty lists
		{name: "null on a field the object has not", obj: dep, want: map[string]any{"spec": map[string]any{"paused": nil}},
			labrun: match, chainsaw: no, kuttl: no,
			why: `null wants the field absent (documented); in both tools a key written must be there ("field not found", "key is missing from map"), so null never matches the API server's objects, which leave nulls out`},
		{name: "null on a field that has a value", obj: dep, want: map[string]any{"spec": map[string]any{"replicas": nil}},
			labrun: no, chainsaw: no, kuttl: no},
		{name: "null below a struct the object has not", obj: dep,
			want:   map[string]any{"metadata": map[string]any{"annotations": map[string]any{"sidecar.istio.io/inject": nil}}},
			labrun: match, chainsaw: no, kuttl: no,
			why: "the annotation is absent, as null asks; before, labrun said no match, so an absence (no web lacks the annotation) held over a web without annotations"},
		{name: "[] on a field the object has not", obj: dep, want: map[string]any{"metadata": map[string]any{"finalizers": []any{}}},
			labrun: match, chainsaw: no, kuttl: no,
			why: "the API server leaves an empty list out: [] (no finalizers) matches it; before, a match never held and an absence held over an object without finalizers"},
		{name: "[] on a list that has elements", obj: dep, want: containers(),
			labrun: no, chainsaw: no, kuttl: no},
		// numbers and types
		{name: "2.0 is 2", obj: dep, want: map[string]any{"spec": map[string]any{"replicas": 2.0}},
			labrun: match, chainsaw: match, kuttl: no,
			why: "KUTTL compares Go types first (float64 from the file's 2.0, int64 from the server's 2); Chainsaw and labrun compare numbers by value"},
		{name: `"2" is not 2`, obj: dep, want: map[string]any{"spec": map[string]any{"replicas": "2"}},
			labrun: no, chainsaw: errs, kuttl: no,
			why: "Chainsaw errs (types are not comparable), failing an error operation too; labrun's vet refuses a value of another JSON type at a built-in kind's typed field (core/v1, apps/v1)"},
		{name: `"true" is not true`, obj: widget, custom: true, want: map[string]any{"spec": map[string]any{"enabled": "true"}},
			labrun: no, chainsaw: errs, kuttl: no,
			why: "as above; a custom resource's field is checked against its CRD's schema when the run reads it"},
		{name: "integers beyond 2^53 compare exactly", obj: widget, custom: true, want: map[string]any{"spec": map[string]any{"count": int64(9007199254740993)}},
			labrun: no, chainsaw: no, kuttl: no},
		{name: "an integer beyond 2^53 is itself", obj: widget, custom: true, want: map[string]any{"spec": map[string]any{"count": int64(9007199254740992)}},
			labrun: match, chainsaw: match, kuttl: match},
		// quantities
		{name: `a built-in kind's quantity: "1000m" is "1"`, obj: dep,
			want:   containers(map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "1000m", "memory": "1024Mi"}}}, map[string]any{}),
			labrun: match, chainsaw: no, kuttl: no,
			why: "the API server returns a built-in kind's quantity canonical (0.5 as 500m): as written, \"0.5\" never matched, and an absence of it held at once (documented)"},
		{name: `a custom resource's "1024Mi" is not its "1Gi"`, obj: widget, custom: true, want: map[string]any{"spec": map[string]any{"size": "1024Mi"}},
			labrun: no, chainsaw: no, kuttl: no},
		// Chainsaw's expressions
		{name: "a Chainsaw expression key", obj: dep, want: map[string]any{"spec": map[string]any{"(length(template.spec.containers))": 2}},
			labrun: no, chainsaw: match, kuttl: no,
			why: "labrun has no expressions in a partial object: vet refuses the key (schema.ChainsawForms), wherever it is, so this verdict is never reached"},
		{name: "a Chainsaw iteration key", obj: dep, want: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"~.(containers)": map[string]any{"image": "app:1"}}}}},
			labrun: no, chainsaw: no, kuttl: no},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs := matchObject(tc.want, tc.obj, false, tc.custom)
			got := match
			if len(diffs) > 0 {
				got = no
			}
			if got != tc.labrun {
				t.Errorf("labrun: %s (%s), want %s", got, describeDiffs(diffs, 3), tc.labrun)
			}
			if (tc.labrun != tc.chainsaw || tc.labrun != tc.kuttl) && tc.why == "" {
				t.Errorf("labrun says %s, Chainsaw %s, KUTTL %s: say why", tc.labrun, tc.chainsaw, tc.kuttl)
			}
		})
	}
}
