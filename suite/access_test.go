package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
)

// TestAccessOf: the rules a labrun job's Roles grant follow from what the scenarios touch:
// the kinds they apply (in the plural the API server names them), exec and logs in pods,
// scaling, a Namespace object by its name; ephemeral namespaces need their rules in every
// namespace; local scenarios need nothing.
func TestAccessOf(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // "ns: rule" lines
	}{
		{"local", `{steps: [{exec: argv: ["true"]}]}`, nil},
		{"apply and exec", `{target: "kube", namespaces: ["lab"], steps: [
			{apply: objects: [{apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "d", spec: host: "x"},
				{apiVersion: "networking.istio.io/v1", kind: "ServiceEntry", metadata: name: "e", spec: hosts: ["x.example"]}]},
			{exec: {pod: "client", argv: ["true"]}},
			{logs: pod: "client"},
		]}`, []string{
			"lab: [] events,pods [get list watch]",
			"lab: [] pods/exec,pods/portforward [create get]",
			"lab: [] pods/log [get]",
			"lab: [networking.istio.io] destinationrules,serviceentries [create delete get list patch update watch]",
			"cluster: [] namespaces [get list watch]",
		}},
		{"namespace by name, scale", `{target: "kube", namespaces: ["lab"], setup: [{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "lab"}]}],
			steps: [{scale: {deployment: "web", replicas: 2}}]}`, []string{
			"lab: [] events,pods [get list watch]",
			"lab: [apps] daemonsets,deployments,statefulsets [get list patch update watch]",
			"lab: [apps] deployments/scale,statefulsets/scale [get patch update]",
			"lab: [apps] replicasets [get list watch]",
			"cluster: [] namespaces [create get list watch]",
			"cluster: [] namespaces lab [delete get patch update]",
		}},
		{"ephemeral", `{target: "kube", ephemeralNamespaces: ["t"], steps: [{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "c"}]}]}`, []string{
			"anywhere: [] configmaps [create delete get list patch update watch]",
			"anywhere: [] events,pods [get list watch]",
			"cluster: [] namespaces [create delete get list watch]",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & " + c.src + "\n"
			if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := dsl.Load([]string{filepath.Join(dir, "s.cue")}, dsl.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a := AccessOf(res.Scenarios, "")
			var got []string
			line := func(where string, r Rule) string {
				s := fmt.Sprintf("%s: %v %s", where, []string{r.Group}, strings.Join(r.Resources, ","))
				if len(r.ResourceNames) > 0 {
					s += " " + strings.Join(r.ResourceNames, ",")
				}
				return s + fmt.Sprintf(" %v", r.Verbs)
			}
			for _, ns := range a.NamespaceNames() {
				for _, r := range a.Namespaces[ns] {
					got = append(got, line(ns, r))
				}
			}
			for _, r := range a.Anywhere {
				got = append(got, line("anywhere", r))
			}
			for _, r := range a.Cluster {
				got = append(got, line("cluster", r))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
	for kind, want := range map[string]string{"DestinationRule": "destinationrules", "ServiceEntry": "serviceentries", "Ingress": "ingresses",
		"Endpoints": "endpoints", "Gateway": "gateways", "AuthorizationPolicy": "authorizationpolicies", "HTTPRoute": "httproutes"} {
		if got := ResourceOf(kind); got != want {
			t.Errorf("ResourceOf(%s) = %s, want %s", kind, got, want)
		}
	}
}
