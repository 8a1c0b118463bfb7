package kube

import (
	"os"
	"path/filepath"
	"testing"
)

const twoContexts = `apiVersion: v1
kind: Config
current-context: lab
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: "not-a-secret"}
contexts:
- name: lab
  context: {cluster: c, user: u, namespace: lab-ns}
- name: other
  context: {cluster: c, user: u}
`

// TestHostEnv: what a command on this machine gets on the kube target, for each way the
// kubeconfig, context and namespace can be given.
func TestHostEnv(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(twoContexts), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		opts Options
		want map[string]string
	}{
		{"--kubeconfig, relative, made absolute; its current context and namespace",
			Options{Kubeconfig: "kubeconfig", Getenv: env(nil)},
			map[string]string{"KUBECONFIG": kc, "LABRUN_CONTEXT": "lab", "LABRUN_NAMESPACE": "lab-ns"}},
		{"--context without a namespace: default",
			Options{Kubeconfig: kc, Context: "other", Getenv: env(nil)},
			map[string]string{"KUBECONFIG": kc, "LABRUN_CONTEXT": "other", "LABRUN_NAMESPACE": "default"}},
		{"-n wins",
			Options{Kubeconfig: kc, Namespace: "mine", Getenv: env(nil)},
			map[string]string{"KUBECONFIG": kc, "LABRUN_CONTEXT": "lab", "LABRUN_NAMESPACE": "mine"}},
		{"$KUBECONFIG as it is",
			Options{Getenv: env(map[string]string{"KUBECONFIG": kc + string(os.PathListSeparator) + "/nonexistent"})},
			map[string]string{"KUBECONFIG": kc + string(os.PathListSeparator) + "/nonexistent", "LABRUN_CONTEXT": "lab", "LABRUN_NAMESPACE": "lab-ns"}},
		{"in a pod: no kubeconfig file",
			Options{Getenv: env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"})},
			map[string]string{"LABRUN_NAMESPACE": "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HostEnv(tc.opts)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
