// Package jobe2e runs labrun job and labrun collect, the built binary as users run it, against
// the sandbox (a real kube-apiserver with RBAC, kube-controller-manager's Job controller, kwok's
// pods; see TESTING.md). Its own package, so that only it starts a sandbox.
//
// What is real: the API server's server-side dry run and its validation of every rendered
// object (Job, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding),
// RBAC's answers for the ServiceAccount (kubectl auth can-i), the Job controller creating one
// pod per completion index, the pods' logs served by the API server from kwok, and labrun
// collect reading them through the API. What is a stand-in: the sandbox has no kubelet that
// runs containers (kwok fakes the pods), so this test plays the kubelet for the labrun
// container: it mounts the ConfigMap's items as the pod spec says, runs the built labrun with
// the container's own args from the pod the Job controller made and JOB_COMPLETION_INDEX from
// its annotation, and writes what it printed into the file kwok serves as the container's log
// (sandbox.WriteContainerLog). The image is not built or pulled: the sandbox has no container
// runtime.
package jobe2e

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// suiteFiles are 9 scenarios of the local target (eight pause and run echo, one sweeps n over
// 1, 2, 3: 11 runs), and, in kube/, one of the kube target that applies a ConfigMap and a
// DestinationRule in its namespace, execs in a pod and reads its logs.
func suiteFiles(t *testing.T, dir string) {
	t.Helper()
	write := func(name, src string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 8; i++ {
		write(fmt.Sprintf("local/s%d.cue", i), fmt.Sprintf(`package lab

import "labrun.dev/schema"

s%d: schema.#Scenario & {
	steps: [{name: "pause", sleep: "%d0ms"}, {name: "hi", exec: argv: ["echo", "s%d"]}]
	expect: ["hi.stdout == \"s%d\\n\""]
}
`, i, i, i, i))
	}
	write("local/sweep.cue", `package lab

import "labrun.dev/schema"

sweep: schema.#Scenario & {
	vars:  n: *1 | int
	sweep: n: [1, 2, 3]
	steps: [{name: "pause", sleep: "\(vars.n*10)ms"}, {name: "hi", exec: argv: ["echo", "\(vars.n)"]}]
	expect: ["hi.stdout == \"\(vars.n)\\n\""]
}
`)
	write("kube/lab.cue", `package lab

import "labrun.dev/schema"

lab: schema.#Scenario & {
	target: "kube"
	namespaces: ["jobe2e-lab"]
	steps: [
		{apply: objects: [
			{apiVersion: "v1", kind: "ConfigMap", metadata: name: "flags", data: a: "1"},
			{apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "backend", spec: {host: "backend", exportTo: ["."]}},
		]},
		{name: "hi", exec: {selector: "app=client", argv: ["echo", "hi"]}},
		{name: "log", logs: selector: "app=client"},
	]
}
`)
}

func kubectl(t *testing.T, sb *sandbox.Sandbox, stdin []byte, args ...string) string {
	t.Helper()
	out, err := kubectlErr(sb, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(sb *sandbox.Sandbox, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(sb.BinDir, "kubectl"), append([]string{"--kubeconfig", sb.Kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func labrun(t *testing.T, sb *sandbox.Sandbox, bin, dir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(e2ebin.Env(t, sb.BinDir), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// TestE2EJobDryRun: what labrun job renders for a kube scenario is accepted by the API
// server's server-side dry run, and, once applied, RBAC gives its ServiceAccount what the
// scenario touches in its namespace and nothing in another.
func TestE2EJobDryRun(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	suiteFiles(t, dir)
	yaml, errOut, err := labrun(t, sb, bin, dir, nil, "job", "--shards", "2", "--image", "labrun:e2e", "-n", "jobe2e-dry", "--name", "dry", "kube/lab.cue")
	if err != nil {
		t.Fatalf("labrun job: %v\n%s", err, errOut)
	}
	for _, kind := range []string{"ServiceAccount", "ConfigMap", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Job"} {
		if !strings.Contains(yaml, "\nkind: "+kind+"\n") {
			t.Errorf("no %s in:\n%s", kind, yaml)
		}
	}
	kubectl(t, sb, nil, "create", "namespace", "jobe2e-dry")
	kubectl(t, sb, nil, "create", "namespace", "jobe2e-lab")
	out := kubectl(t, sb, []byte(yaml), "apply", "--server-side", "--dry-run=server", "--validate=strict", "-f", "-")
	if n := strings.Count(out, "(server dry run)"); n != 7 {
		t.Errorf("dry run accepted %d objects, want 7:\n%s", n, out)
	}
	kubectl(t, sb, []byte(yaml), "apply", "--server-side", "-f", "-")
	sa := "system:serviceaccount:jobe2e-dry:dry"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "configmaps", "-n", "jobe2e-lab"}, "yes"},
		{[]string{"create", "destinationrules.networking.istio.io", "-n", "jobe2e-lab"}, "yes"},
		{[]string{"create", "pods", "--subresource=exec", "-n", "jobe2e-lab"}, "yes"},
		{[]string{"get", "pods", "--subresource=log", "-n", "jobe2e-lab"}, "yes"},
		{[]string{"create", "pods", "--subresource=exec", "-n", "default"}, "no"},
		{[]string{"create", "configmaps", "-n", "default"}, "no"},
		{[]string{"create", "secrets", "-n", "jobe2e-lab"}, "no"},
		{[]string{"delete", "deployments.apps", "-n", "jobe2e-lab"}, "no"},
		{[]string{"create", "namespaces"}, "no"},
	} {
		out, _ := kubectlErr(sb, nil, append([]string{"auth", "can-i", "--as", sa}, c.args...)...)
		// The answer is the last line (kubectl may warn first: "namespaces" is not namespaced).
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := lines[len(lines)-1]; got != c.want {
			t.Errorf("can %s %s? %q, want %s", sa, strings.Join(c.args, " "), out, c.want)
		}
	}
}

// TestE2EJobCollect: the Job of 3 shards of the local suite is created for real; the Job
// controller makes one pod per index; each pod's labrun container is played by this test (see
// the package comment); labrun collect reads the pods' logs through the API server and merges
// them into the summary rows and JUnit test count of one unsharded run.
func TestE2EJobCollect(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	suiteFiles(t, dir)
	const ns, job, shards = "jobe2e", "suite", 3
	yaml, errOut, err := labrun(t, sb, bin, dir, nil, "job", "--shards", fmt.Sprint(shards), "--image", "labrun:e2e", "-n", ns, "--name", job, "local")
	if err != nil {
		t.Fatalf("labrun job: %v\n%s", err, errOut)
	}
	kubectl(t, sb, nil, "create", "namespace", ns)
	kubectl(t, sb, []byte(yaml), "apply", "--server-side", "-f", "-")

	// The Job controller's pods, one per index.
	type podJSON struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Containers []struct {
				Name       string   `json:"name"`
				Args       []string `json:"args"`
				WorkingDir string   `json:"workingDir"`
			} `json:"containers"`
			Volumes []struct {
				Name      string `json:"name"`
				ConfigMap *struct {
					Name  string `json:"name"`
					Items []struct{ Key, Path string }
				} `json:"configMap"`
			} `json:"volumes"`
		} `json:"spec"`
	}
	var pods []podJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		var list struct{ Items []podJSON }
		if err := json.Unmarshal([]byte(kubectl(t, sb, nil, "get", "pods", "-n", ns, "-l", "labrun.dev/job="+job, "-o", "json")), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == shards {
			pods = list.Items
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Job controller made %d pods in 60 s, want %d", len(list.Items), shards)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var cm struct{ Data map[string]string }
	if err := json.Unmarshal([]byte(kubectl(t, sb, nil, "get", "configmap", "-n", ns, job+"-scenarios", "-o", "json")), &cm); err != nil {
		t.Fatal(err)
	}
	// The kubelet stand-in: each pod's container, run here.
	indexes := map[string]bool{}
	for _, pod := range pods {
		idx := pod.Metadata.Annotations["batch.kubernetes.io/job-completion-index"]
		indexes[idx] = true
		c := pod.Spec.Containers[0]
		root := filepath.Join(t.TempDir(), "root")
		mount := filepath.Join(root, c.WorkingDir)
		for _, v := range pod.Spec.Volumes {
			if v.ConfigMap == nil {
				continue
			}
			for _, it := range v.ConfigMap.Items {
				p := filepath.Join(mount, it.Path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(cm.Data[it.Key]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		out, errOut, err := labrun(t, sb, bin, mount, []string{"JOB_COMPLETION_INDEX=" + idx}, c.Args...)
		if err != nil {
			t.Fatalf("pod %s: labrun %s: %v\n%s", pod.Metadata.Name, strings.Join(c.Args, " "), err, errOut)
		}
		lines := strings.Split(strings.TrimRight(errOut+out, "\n"), "\n")
		sb.WriteContainerLog(t, ns, pod.Metadata.Name, c.Name, lines...)
	}
	if len(indexes) != shards {
		t.Fatalf("completion indexes %v, want %d different", indexes, shards)
	}

	// One unsharded run, and the collect.
	out, errOut, err := labrun(t, sb, bin, dir, nil, "run", "-q", "--report-dir", "one", "--junit", "one.xml", "local")
	if err != nil {
		t.Fatalf("unsharded run: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = labrun(t, sb, bin, dir, nil, "collect", "--kubeconfig", sb.Kubeconfig, "-n", ns, "--name", job, "--report-dir", "collected", "--junit", "collected.xml")
	if err != nil {
		t.Fatalf("labrun collect: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, "9 scenarios: 9 passed, 0 failed, 0 errors (11 runs)") {
		t.Errorf("collect's total:\n%s", out)
	}
	if want, got := summaryRows(t, filepath.Join(dir, "one")), summaryRows(t, filepath.Join(dir, "collected")); !slices.Equal(got, want) {
		t.Errorf("collected summary rows:\n%s\none run's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if want, got := junitTests(t, filepath.Join(dir, "one.xml")), junitTests(t, filepath.Join(dir, "collected.xml")); got != want {
		t.Errorf("collected JUnit has %d tests, one run's %d", got, want)
	}
	// Every run has its report, written from the record collect read.
	if mds, _ := filepath.Glob(filepath.Join(dir, "collected", "*_s[0-9]_*.md")); len(mds) != 8 {
		t.Errorf("reports of the 8 single runs: %v", mds)
	}
}

func summaryRows(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.summary.json"))
	if len(files) != 1 {
		t.Fatalf("%s: summaries %v, want 1", dir, files)
	}
	s, err := report.ReadSummary(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{fmt.Sprintf("%s: %d of %d passed, %s", s.Scenario, s.Passed, s.Planned, s.Verdict)}
	for _, r := range s.Runs {
		rows = append(rows, fmt.Sprintf("%s %d/%d %s %v %v", r.ID, r.Combination, r.Round, r.Outcome, r.Expectations, r.Values))
	}
	return rows
}

func junitTests(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct{} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range doc.Suites {
		n += len(s.Cases)
	}
	return n
}
