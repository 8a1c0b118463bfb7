package main

// Fixture bodies may name addresses of the run's own objects, which a recording cannot know: a
// /clusters answer lists the addresses DNS gave the sidecar, and in the sandbox those are the
// ClusterIPs and pod IPs this run's Services and pods got. The stand-in fills them in when it
// serves the body:
//
//	{{clusterIP NAME}}     the ClusterIP of Service NAME in the pod's namespace
//	{{podIP SELECTOR}}     the IP of the newest pod of the pod's namespace matching the label
//	                       selector (e.g. app=backend-a) that has one
//
// In a sandbox of several clusters, a trailing @CLUSTER (a cluster ID: {{podIP app=backend-b
// @cluster2}}) looks in the namespace of the same name in that cluster: a recording of a DNS
// flip names the new address, which may be another cluster's pod.
//
// A reference is looked up once per fixture directory and remembered (.refs.json): a pod that was
// killed keeps the address it had (as a DNS record of it does), so a snapshot after the kill still
// shows it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var refRE = regexp.MustCompile(`\{\{\s*(clusterIP|podIP)\s+([^}]+?)\s*\}\}`)

// expandRefs fills in the {{clusterIP …}} and {{podIP …}} of body, remembering what it looked up
// in memo (a file; "" for none).
func expandRefs(env environment, body, memo string) (string, error) {
	if !strings.Contains(body, "{{") {
		return body, nil
	}
	clients := map[string]kubernetes.Interface{} // by cluster ID, "" the pod's own
	cache := map[string]string{}
	if memo != "" {
		f, err := os.OpenFile(memo, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return "", err
		}
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if b, _ := io.ReadAll(f); len(b) > 0 {
			if err := json.Unmarshal(b, &cache); err != nil {
				return "", fmt.Errorf("%s: %w", memo, err)
			}
		}
		defer func() {
			b, _ := json.Marshal(cache)
			_ = f.Truncate(0)
			_, _ = f.WriteAt(b, 0)
		}()
	}
	var firstErr error
	out := refRE.ReplaceAllStringFunc(body, func(m string) string {
		if firstErr != nil {
			return m
		}
		if v, ok := cache[m]; ok {
			return v
		}
		sub := refRE.FindStringSubmatch(m)
		what, cluster := splitCluster(sub[2])
		cs, ok := clients[cluster]
		if !ok {
			c, err := kubeClient(env, cluster)
			if err != nil {
				firstErr = fmt.Errorf("%s: %w", m, err)
				return m
			}
			cs, clients[cluster] = c, c
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var v string
		switch sub[1] {
		case "clusterIP":
			svc, err := cs.CoreV1().Services(env.PodNamespace).Get(ctx, what, metav1.GetOptions{})
			if err != nil {
				firstErr = fmt.Errorf("%s: %w", m, err)
				return m
			}
			v = svc.Spec.ClusterIP
		case "podIP":
			pods, err := cs.CoreV1().Pods(env.PodNamespace).List(ctx, metav1.ListOptions{LabelSelector: what})
			if err != nil {
				firstErr = fmt.Errorf("%s: %w", m, err)
				return m
			}
			items := pods.Items
			sort.SliceStable(items, func(i, j int) bool {
				return items[i].CreationTimestamp.After(items[j].CreationTimestamp.Time)
			})
			for _, p := range items {
				if p.Status.PodIP != "" && p.DeletionTimestamp == nil {
					v = p.Status.PodIP
					break
				}
			}
		}
		if v == "" {
			where := "namespace " + env.PodNamespace
			if cluster != "" {
				where += " of cluster " + cluster
			}
			firstErr = fmt.Errorf("%s: no address in %s", m, where)
			return m
		}
		cache[m] = v
		return v
	})
	if firstErr != nil {
		return "", fmt.Errorf("filling in the fixture's addresses: %w", firstErr)
	}
	return out, nil
}

// splitCluster takes a reference's trailing " @CLUSTER" off: the name or selector, and the
// cluster ID ("" for the pod's own cluster). Label selectors cannot hold "@".
func splitCluster(ref string) (what, cluster string) {
	i := strings.LastIndex(ref, "@")
	if i < 0 {
		return ref, ""
	}
	return strings.TrimSpace(ref[:i]), strings.TrimSpace(ref[i+1:])
}

// kubeClient is a client of the pod's own cluster (cluster ""), or of the cluster of that ID in
// a sandbox of several.
func kubeClient(env environment, cluster string) (kubernetes.Interface, error) {
	if cluster == "" {
		if env.Kubeconfig == "" {
			return nil, fmt.Errorf("KUBECONFIG is not set: cannot look up the run's addresses")
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return kubernetes.NewForConfig(cfg)
	}
	if env.Mesh == "" {
		return nil, fmt.Errorf("LABRUN_MESH_KUBECONFIG is not set: cluster %s is asked for, but this is not a sandbox of several clusters", cluster)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: env.Mesh},
		&clientcmd.ConfigOverrides{CurrentContext: cluster}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	return kubernetes.NewForConfig(cfg)
}
