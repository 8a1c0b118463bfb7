package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Clusters is a sandbox of several clusters in one mesh, multi-primary on one network: each
// cluster has its own control plane (etcd, kube-apiserver, controllers, kwok, the stand-ins) and
// its own istiod, with cluster IDs cluster1, cluster2, …, and pod IPs apart (10.<n>.0.0/24).
// Each istiod holds a remote secret of every other cluster — a Secret in istio-system labelled
// istio/multiCluster=true whose data is that cluster's kubeconfig, under its cluster ID — and
// so sees the other clusters' Services and endpoints, as istioctl create-remote-secret sets up.
type Clusters struct {
	// Members are the clusters, in order: Members[i] has cluster ID cluster<i+1>.
	Members []*Sandbox
	// Kubeconfig is one file with a context per cluster, named by its cluster ID (cluster1 is
	// the current context).
	Kubeconfig string
	dir        string
}

// UpClusters starts n clusters (n ≥ 2) at once, gives each istiod the remote secrets of the
// others, and returns when every istiod has synced every remote cluster. progress gets each
// cluster's lines prefixed with its ID. On failure everything started is stopped.
func UpClusters(ctx context.Context, bins Binaries, n int, progress io.Writer) (_ *Clusters, err error) {
	if n < 2 {
		return nil, fmt.Errorf("a sandbox of clusters needs at least 2, got %d (one cluster is Up)", n)
	}
	if progress == nil {
		progress = io.Discard
	}
	dir, err := os.MkdirTemp("", "labrun-clusters-")
	if err != nil {
		return nil, err
	}
	c := &Clusters{Members: make([]*Sandbox, n), dir: dir}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	errs := make([]error, n)
	var wg sync.WaitGroup
	var mu sync.Mutex // one progress line at a time
	for i := range n {
		id := fmt.Sprintf("cluster%d", i+1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &prefixWriter{w: progress, prefix: "[" + id + "] ", mu: &mu}
			c.Members[i], errs[i] = upMember(ctx, bins, w, member{clusterID: id, podCIDR: fmt.Sprintf("10.%d.0.0/24", i+1),
				meshKubeconfig: c.kubeconfigPath()})
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", id, errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := c.writeKubeconfig(); err != nil {
		return nil, err
	}
	for _, m := range c.Members {
		for _, other := range c.Members {
			if other != m {
				if err := m.addRemoteSecret(ctx, other); err != nil {
					return nil, fmt.Errorf("%s: remote secret of %s: %w", m.ClusterID, other.ClusterID, err)
				}
			}
		}
	}
	for _, m := range c.Members {
		var others []string
		for _, o := range c.Members {
			if o != m {
				others = append(others, o.ClusterID)
			}
		}
		if err := m.waitRemoteClusters(ctx, others, 90*time.Second); err != nil {
			return nil, err
		}
		m.step("istiod synced remote cluster(s) " + strings.Join(others, ", "))
	}
	return c, nil
}

// upMember is Up for one cluster of several.
func upMember(ctx context.Context, bins Binaries, progress io.Writer, m member) (*Sandbox, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		s, err := upOnce(ctx, bins, progress, m)
		if err == nil || attempt == attempts || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
		fmt.Fprintf(progress, "sandbox: a port was taken by another process between choosing and binding it; starting again with new ports (%d of %d)\n", attempt+1, attempts)
	}
}

// Stop stops every cluster.
func (c *Clusters) Stop() error {
	errs := make([]error, len(c.Members))
	var wg sync.WaitGroup
	for i, m := range c.Members {
		if m != nil {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = m.Stop() }() // at once: each may wait its grace
		}
	}
	wg.Wait()
	if c.dir != "" {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}

// writeKubeconfig writes one kubeconfig with a context per cluster, named by its ID.
func (c *Clusters) writeKubeconfig() error {
	var clusters, users, contexts strings.Builder
	for _, m := range c.Members {
		fmt.Fprintf(&clusters, "- name: %s\n  cluster:\n    server: %s\n    insecure-skip-tls-verify: true\n", m.ClusterID, m.RESTConfig.Host)
		fmt.Fprintf(&users, "- name: %s\n  user:\n    token: %s\n", m.ClusterID, m.RESTConfig.BearerToken)
		fmt.Fprintf(&contexts, "- name: %s\n  context:\n    cluster: %s\n    user: %s\n", m.ClusterID, m.ClusterID, m.ClusterID)
	}
	yaml := "apiVersion: v1\nkind: Config\nclusters:\n" + clusters.String() + "users:\n" + users.String() +
		"contexts:\n" + contexts.String() + "current-context: " + c.Members[0].ClusterID + "\n"
	c.Kubeconfig = c.kubeconfigPath()
	return os.WriteFile(c.Kubeconfig, []byte(yaml), 0o600)
}

// kubeconfigPath is where writeKubeconfig writes: known before the clusters start, so that each
// cluster's stand-in is told where to find the others (written before UpClusters returns).
func (c *Clusters) kubeconfigPath() string { return filepath.Join(c.dir, "kubeconfig") }

// addRemoteSecret gives this cluster's istiod the kubeconfig of other, as istioctl
// create-remote-secret does: a Secret in istio-system labelled istio/multiCluster=true, its
// data the kubeconfig under the other cluster's ID.
func (s *Sandbox) addRemoteSecret(ctx context.Context, other *Sandbox) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "istio-remote-secret-" + other.ClusterID, Namespace: "istio-system",
			Labels:      map[string]string{"istio/multiCluster": "true"},
			Annotations: map[string]string{"networking.istio.io/cluster": other.ClusterID},
		},
		StringData: map[string]string{other.ClusterID: kubeconfigYAML(other.RESTConfig.Host, other.RESTConfig.BearerToken)},
	}
	_, err := s.client.CoreV1().Secrets("istio-system").Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitRemoteClusters waits until istiod's /debug/clusterz lists every one of ids as synced.
func (s *Sandbox) waitRemoteClusters(ctx context.Context, ids []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		synced, body, err := s.remoteClusters(ctx)
		if err == nil && !slices.ContainsFunc(ids, func(id string) bool { return !synced[id] }) {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = "istiod's /debug/clusterz: " + body
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: istiod did not sync remote cluster(s) %s within %s: %s", s.ClusterID, strings.Join(ids, ", "), timeout, last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// remoteClusters reads istiod's /debug/clusterz: the clusters it knows and whether each synced.
func (s *Sandbox) remoteClusters(ctx context.Context) (map[string]bool, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.IstiodHTTP+"/debug/clusterz", nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, string(b), fmt.Errorf("istiod's /debug/clusterz: %s: %s", resp.Status, b)
	}
	var list []struct {
		ID         string `json:"id"`
		SyncStatus string `json:"syncStatus"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, string(b), fmt.Errorf("istiod's /debug/clusterz: %w", err)
	}
	out := map[string]bool{}
	for _, c := range list {
		out[c.ID] = strings.EqualFold(c.SyncStatus, "synced")
	}
	return out, string(b), nil
}

// prefixWriter prefixes every write (a progress line) with the cluster it is about.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
