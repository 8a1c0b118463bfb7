package kube

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labrun job: the shards of a suite as the pods of a Kubernetes Indexed Job, each pod running
// shard JOB_COMPLETION_INDEX+1 of n with its records on stdout (JSON lines, the pod's log),
// the scenarios in a ConfigMap, a ServiceAccount whose Roles grant what the scenarios touch;
// labrun collect reads the pods' logs back.

// JobSpec is what RenderJob renders.
type JobSpec struct {
	Name, Namespace, Image string
	// Shards is the Job's completions (one pod per shard), Parallelism how many run at once.
	Shards, Parallelism int
	// Files are the scenario files: their paths relative to the mount, and contents.
	Files []JobFile
	// Args are labrun's arguments after the shard flags (paths relative to the mount, flags).
	Args []string
	// Access are the rules of the Roles (by namespace), of a ClusterRole bound in every
	// namespace (Anywhere), and of a ClusterRole on cluster-scoped resources (Cluster).
	Namespaces map[string][]JobRule
	Anywhere   []JobRule
	Cluster    []JobRule
}

// JobFile is one file of the scenarios' ConfigMap.
type JobFile struct {
	Path string
	Data string
}

// JobRule is a rule of a Role.
type JobRule struct {
	Group         string
	Resources     []string
	ResourceNames []string
	Verbs         []string
}

// MountPath is where the pods see the scenarios.
const MountPath = "/scenarios"

// JobLabel labels everything labrun job renders with the job's name (and the pods, which
// labrun collect finds by it).
const JobLabel = "labrun.dev/job"

// RenderJob renders the objects of a labrun job, in the order they are to be applied.
func RenderJob(s JobSpec) []map[string]any {
	labels := map[string]any{JobLabel: s.Name, "app.kubernetes.io/managed-by": "labrun"}
	meta := func(name, ns string) map[string]any {
		m := map[string]any{"name": name, "labels": labels}
		if ns != "" {
			m["namespace"] = ns
		}
		return m
	}
	var out []map[string]any
	out = append(out, map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(s.Name, s.Namespace)})
	data := map[string]any{}
	var items []any
	for i, f := range s.Files {
		key := fmt.Sprintf("f%d-", i)
		key += lastBytes(configMapKey(f.Path), configMapKeyMax-len(key))
		data[key] = f.Data
		items = append(items, map[string]any{"key": key, "path": f.Path})
	}
	out = append(out, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(s.Name+"-scenarios", s.Namespace), "data": data})
	subjects := []any{map[string]any{"kind": "ServiceAccount", "name": s.Name, "namespace": s.Namespace}}
	rules := func(rs []JobRule) []any {
		out := []any{}
		for _, r := range rs {
			rule := map[string]any{"apiGroups": []any{r.Group}, "resources": strs(r.Resources), "verbs": strs(r.Verbs)}
			if len(r.ResourceNames) > 0 {
				rule["resourceNames"] = strs(r.ResourceNames)
			}
			out = append(out, rule)
		}
		return out
	}
	nss := make([]string, 0, len(s.Namespaces))
	for ns := range s.Namespaces {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		out = append(out,
			map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(s.Name, ns), "rules": rules(s.Namespaces[ns])},
			map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(s.Name, ns),
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": s.Name},
				"subjects": subjects})
	}
	for _, c := range []struct {
		suffix string
		rules  []JobRule
	}{{"-anywhere", s.Anywhere}, {"-cluster", s.Cluster}} {
		if len(c.rules) == 0 {
			continue
		}
		name := s.Namespace + "-" + s.Name + c.suffix
		out = append(out,
			map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta(name, ""), "rules": rules(c.rules)},
			map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta(name, ""),
				"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
				"subjects": subjects})
	}
	args := append([]any{"run", "--output", "json", "--report-dir", "", "--shard", fmt.Sprintf("job/%d", s.Shards)}, anys(s.Args)...)
	podLabels := map[string]any{JobLabel: s.Name}
	out = append(out, map[string]any{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(s.Name, s.Namespace),
		"spec": map[string]any{
			"completionMode": "Indexed",
			"completions":    s.Shards,
			"parallelism":    s.Parallelism,
			// A shard whose runs fail exits 1: its pod is not retried (its runs would run
			// twice), and the other shards run on (the per-index limit, unlike backoffLimit,
			// does not end the Job at the first failure).
			"backoffLimitPerIndex": 0,
			"template": map[string]any{
				"metadata": map[string]any{"labels": podLabels},
				"spec": map[string]any{
					"serviceAccountName": s.Name,
					// No rules (every scenario local): no token in the pod either.
					"automountServiceAccountToken": len(s.Namespaces)+len(s.Anywhere)+len(s.Cluster) > 0,
					"restartPolicy":                "Never",
					"securityContext": map[string]any{
						"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
						"seccompProfile": map[string]any{"type": "RuntimeDefault"},
					},
					"containers": []any{map[string]any{
						"name": "labrun", "image": s.Image, "args": args, "workingDir": MountPath,
						"env": []any{map[string]any{"name": "HOME", "value": "/tmp"}},
						"securityContext": map[string]any{
							"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
							"capabilities": map[string]any{"drop": []any{"ALL"}},
						},
						"volumeMounts": []any{
							map[string]any{"name": "scenarios", "mountPath": MountPath, "readOnly": true},
							map[string]any{"name": "tmp", "mountPath": "/tmp"},
						},
					}},
					"volumes": []any{
						map[string]any{"name": "scenarios", "configMap": map[string]any{"name": s.Name + "-scenarios", "items": items}},
						map[string]any{"name": "tmp", "emptyDir": map[string]any{}},
					},
				},
			},
		},
	})
	return out
}

// configMapKeyMax is the longest ConfigMap key the API server takes (IsConfigMapKey).
const configMapKeyMax = 253

// lastBytes is the tail of s of at most n bytes (s is ASCII).
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// configMapKey is a path as a ConfigMap key ([-._a-zA-Z0-9]+).
func configMapKey(path string) string {
	var b strings.Builder
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func anys(ss []string) []any { return strs(ss) }

// JobPod is a pod of a labrun job: its name, its completion index and phase.
type JobPod struct {
	Name  string
	Index int
	Phase string
}

// JobLogs is the cluster side of labrun collect: the pods of a labrun job, and their logs.
type JobLogs struct {
	c  clients
	ns string
}

// NewJobLogs connects as the kube target does (opts' kubeconfig, context and namespace) for
// labrun collect; ns is the job's namespace ("" for the context's).
func NewJobLogs(opts Options, ns string) (*JobLogs, string, error) {
	cfg, defNS, _, err := loadConfig(opts)
	if err != nil {
		return nil, "", err
	}
	c, err := newClients(cfg)
	if err != nil {
		return nil, "", err
	}
	if ns == "" {
		ns = defNS
	}
	return &JobLogs{c: c, ns: ns}, ns, nil
}

// Pods lists the job's pods, by completion index (then name).
func (j *JobLogs) Pods(ctx context.Context, job string) ([]JobPod, error) {
	list, err := j.c.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{LabelSelector: JobLabel + "=" + job})
	if err != nil {
		return nil, err
	}
	var out []JobPod
	for _, p := range list.Items {
		idx := -1
		if s, ok := p.Annotations["batch.kubernetes.io/job-completion-index"]; ok {
			if n, err := strconv.Atoi(s); err == nil {
				idx = n
			}
		}
		out = append(out, JobPod{Name: p.Name, Index: idx, Phase: string(p.Status.Phase)})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Index != out[b].Index {
			return out[a].Index < out[b].Index
		}
		return out[a].Name < out[b].Name
	})
	return out, nil
}

// Logs streams the log of pod's labrun container; the caller closes it.
func (j *JobLogs) Logs(ctx context.Context, pod string) (io.ReadCloser, error) {
	return j.c.CoreV1().Pods(j.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "labrun"}).Stream(ctx)
}
