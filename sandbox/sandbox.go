// Package sandbox starts a real Kubernetes control plane and a real istiod on loopback, for tests
// and for people: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake kubelets
// whose exec runs local commands and whose container logs are local files) and istiod
// (pilot-discovery), all built from source by build.sh and cached.
//
// What it proves: labrun's Kubernetes side against the real API (apply, CRD validation with Istio's
// real schemas, rollout, pod lifecycle, exec, logs) and Istio's translation of config into Envoy
// config (the real istiod). What it cannot: Envoy's runtime behaviour. There is no Envoy: exec of
// `pilot-agent request GET …` in any pod runs the Envoy admin stand-in (a test program, see
// sandbox/standin), whose config_dump is what istiod sent for that pod (as a sidecar, or as a
// waypoint in a waypoint's pod) and whose stats and clusters are fixtures a test wrote
// (EnvoyStandIn); `pilot-agent request POST logging?…` sets the pod's Envoy log levels as Envoy does.
//
// Three more stand-ins, named so: the sidecar injection stand-in (inject.go), a webhook that adds an
// istio-proxy container (no Envoy in it) to the pods Istio's injector would inject, so that
// scenarios written for a cluster exec into istio-proxy as they would there; the waypoint
// deployment stand-in (waypoint.go), which creates the Deployment, Service and ServiceAccount of
// every Gateway of class istio-waypoint in place of istiod's gateway deployment controller; and the
// exec stand-in, the same test program linked in the pods' PATH as fortio (and, when a test
// replays them, bash, ss or another command), which replays a recorded run for a pod that has one
// (ExecReplay, FortioReplay, ReplayDir) and runs the real program otherwise. The Gateway API
// standard CRDs are installed and istiod runs with Gateway API and ambient on (no ztunnel, no CNI).
//
// Tests use Start (one sandbox per test binary, stopped by Main); people use
// `go run ./sandbox/cmd/labrun-sandbox up`. LABRUN_SANDBOX=off makes Start skip. UpClusters
// (StartClusters in tests, `labrun-sandbox up --clusters N`) starts several such clusters in
// one mesh, each istiod reading the others' endpoints through remote secrets (clusters.go).
package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// NodeName is the one kwok node pods are scheduled to.
const NodeName = "kwok-node-0"

// Sandbox is a running control plane. Its fields are read-only.
type Sandbox struct {
	Kubeconfig string       // path to a kubeconfig file (context "sandbox", token auth, insecure TLS)
	RESTConfig *rest.Config // the same, for client-go (QPS 100, burst 200)
	Dir        string       // temp dir of this sandbox: component logs (*.log), keys, fixtures, pod dirs
	IstiodXDS  string       // istiod plaintext xDS address host:port
	IstiodHTTP string       // istiod debug/ready HTTP address host:port
	BinDir     string       // where kubectl, fortio, etc. are (cache bin dir)
	// ClusterID is istiod's cluster ID (its CLUSTER_ID) in a sandbox of several clusters
	// (UpClusters); "" for one cluster (istiod's default, Kubernetes).
	ClusterID string
	// podCIDR is kwok's pod IP range ("": kwok's default, 10.0.0.0/24).
	podCIDR string
	// meshKubeconfig is the kubeconfig of every cluster of a sandbox of several (Clusters.Kubeconfig),
	// which the stand-in reads for a fixture's {{podIP … @cluster2}}; "" for one cluster.
	meshKubeconfig string

	bins      Binaries
	client    kubernetes.Interface
	dyn       dynamic.Interface
	apply     *applier
	procs     []*process // in start order
	stopWatch context.CancelFunc
	// watchers are the informers running (the pod watcher, the waypoint deployment stand-in):
	// done once stopWatch has stopped them (runInformer).
	watchers sync.WaitGroup
	injector *http.Server // the sidecar injection stand-in (inject.go)
	stopOnce sync.Once
	stopErr  error
	progress io.Writer
	started  time.Time
}

// Up starts a sandbox from built binaries and returns when every component is healthy. progress
// receives one line per step (nil: none). On failure everything started is stopped and the error
// carries the tails of the component logs. A start that lost a port to another process (a
// component failed with "address already in use": the ports are free when chosen, not reserved)
// is retried with new ports, up to three times in all.
func Up(ctx context.Context, bins Binaries, progress io.Writer) (*Sandbox, error) {
	if progress == nil {
		progress = io.Discard
	}
	return upMember(ctx, bins, progress, member{})
}

// member is what sets one cluster of several apart (UpClusters): its istiod's cluster ID and
// its pods' IP range. The zero member is the one cluster of Up.
type member struct {
	clusterID, podCIDR string
	// meshKubeconfig is where UpClusters writes the kubeconfig of all clusters, once all are up.
	meshKubeconfig string
}

func upOnce(ctx context.Context, bins Binaries, progress io.Writer, m member) (_ *Sandbox, err error) {
	dir, err := os.MkdirTemp("", "labrun-sandbox-")
	if err != nil {
		return nil, err
	}
	s := &Sandbox{Dir: dir, BinDir: bins.BinDir, bins: bins, progress: progress, started: time.Now(), ClusterID: m.clusterID, podCIDR: m.podCIDR, meshKubeconfig: m.meshKubeconfig}
	defer func() {
		if err != nil {
			err = s.failure(err)
			_ = s.Stop()
		}
	}()
	if err := s.up(ctx); err != nil {
		return nil, err
	}
	s.step("ready")
	return s, nil
}

// ports the sandbox listens on, all on 127.0.0.1.
type ports struct {
	etcdClient, etcdPeer, apiserver, kcm, scheduler, kwok                                int
	istiodHTTP, istiodGRPC, istiodSecureGRPC, istiodMonitoring, istiodHTTPS, istiodCtrlz int
}

func (s *Sandbox) up(ctx context.Context) error {
	var p ports
	free, err := freePorts(12)
	if err != nil {
		return err
	}
	p.etcdClient, p.etcdPeer, p.apiserver, p.kcm, p.scheduler, p.kwok = free[0], free[1], free[2], free[3], free[4], free[5]
	p.istiodHTTP, p.istiodGRPC, p.istiodSecureGRPC, p.istiodMonitoring, p.istiodHTTPS = free[6], free[7], free[8], free[9], free[10]
	p.istiodCtrlz = free[11] // ControlZ defaults to 9876: two sandboxes would collide

	path := func(elem ...string) string { return filepath.Join(append([]string{s.Dir}, elem...)...) }
	for _, d := range []string{"etcd", "certs", "istiod", "podbin", "standin", "logs", "pods"} {
		if err := os.MkdirAll(path(d), 0o755); err != nil {
			return err
		}
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	if err := writeServiceAccountKeys(path("sa.key"), path("sa.pub")); err != nil {
		return err
	}
	if err := writeServingCert(path("kwok.crt"), path("kwok.key"), "kwok"); err != nil {
		return err
	}
	if err := os.WriteFile(path("tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return err
	}

	// etcd
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", p.etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPeer)
	if err := s.start("etcd", s.Dir, os.Environ(), "etcd",
		"--name=sandbox", "--data-dir="+path("etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=sandbox="+peerURL, "--unsafe-no-fsync", "--log-level=warn"); err != nil {
		return err
	}
	if err := s.waitHTTP(ctx, "etcd", etcdURL+"/health", "", 30*time.Second); err != nil {
		return err
	}
	s.step("etcd healthy")

	// kube-apiserver
	server := fmt.Sprintf("https://127.0.0.1:%d", p.apiserver)
	if err := s.start("kube-apiserver", s.Dir, os.Environ(), "kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", p.apiserver),
		"--cert-dir="+path("certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+path("sa.pub"), "--service-account-signing-key-file="+path("sa.key"),
		"--token-auth-file="+path("tokens.csv"), "--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none", // it refuses a loopback advertise address otherwise
		"--service-cluster-ip-range=10.96.0.0/16",
		"--kubelet-preferred-address-types=InternalIP", // kwok's node IP, 127.0.0.1
		"--enable-priority-and-fairness=false", "--profiling=false"); err != nil {
		return err
	}
	if err := s.waitHTTP(ctx, "kube-apiserver", server+"/readyz", token, 90*time.Second); err != nil {
		return err
	}
	s.step("kube-apiserver ready")

	s.Kubeconfig = path("kubeconfig")
	if err := os.WriteFile(s.Kubeconfig, []byte(kubeconfigYAML(server, token)), 0o600); err != nil {
		return err
	}
	s.RESTConfig = &rest.Config{
		Host:            server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100,
		Burst:           200,
	}
	if s.client, err = kubernetes.NewForConfig(s.RESTConfig); err != nil {
		return err
	}
	if s.dyn, err = dynamic.NewForConfig(s.RESTConfig); err != nil {
		return err
	}
	s.apply = newApplier(s.client, s.dyn)
	if err := s.startInjector(ctx); err != nil {
		return fmt.Errorf("sidecar injection stand-in: %w", err)
	}
	s.step("sidecar injection stand-in registered")

	// Controllers and scheduler start while the CRDs go in.
	componentFlags := []string{"--kubeconfig=" + s.Kubeconfig, "--authentication-kubeconfig=" + s.Kubeconfig,
		"--authorization-kubeconfig=" + s.Kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1"}
	if err := s.start("kube-controller-manager", s.Dir, os.Environ(), "kube-controller-manager",
		append(componentFlags, fmt.Sprintf("--secure-port=%d", p.kcm),
			"--service-account-private-key-file="+path("sa.key"),
			"--root-ca-file="+path("certs", "apiserver.crt"),
			"--controllers=*,-nodeipam,-nodelifecycle")...); err != nil {
		return err
	}
	if err := s.start("kube-scheduler", s.Dir, os.Environ(), "kube-scheduler",
		append(componentFlags, fmt.Sprintf("--secure-port=%d", p.scheduler))...); err != nil {
		return err
	}

	crds, err := readData(s.bins.DataDir, "kwok-crds.yaml", "istio-crds.yaml", "gateway-api-crds.yaml")
	if err != nil {
		return err
	}
	if err := s.apply.apply(ctx, crds); err != nil {
		return fmt.Errorf("applying kwok, Istio and Gateway API CRDs: %w", err)
	}
	s.step("kwok, Istio and Gateway API CRDs established")

	// The fallback for pods without a per-pod Exec (see podwatch.go): a local exec, no pod identity.
	if err := s.apply.apply(ctx, []byte(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata: {name: local}
spec: {execs: [{local: {envs: [{name: LABRUN_SANDBOX_EXEC, value: "cluster"}]}}]}
`)); err != nil {
		return err
	}
	watchCtx, cancel := context.WithCancel(context.Background())
	s.stopWatch = cancel
	if err := s.watchPods(watchCtx); err != nil {
		return err
	}
	if err := s.watchWaypoints(watchCtx); err != nil {
		return err
	}
	s.step("waypoint deployment stand-in watching Gateways of class " + waypointClass)

	// kwok: exec'd commands inherit its environment, so the sandbox-wide settings of the stand-in go
	// here, and PATH finds the stand-in (as pilot-agent) and the fortio CLI first.
	// fortio is the exec stand-in too: it replays a recorded result when a test wrote one for the
	// pod, else runs the real fortio CLI, which it finds in podbin.real.
	if err := os.MkdirAll(path("podbin.real"), 0o755); err != nil {
		return err
	}
	for name, target := range map[string]string{"pilot-agent": s.bins.StandIn, "fortio": s.bins.StandIn,
		filepath.Join("..", "podbin.real", "fortio"): filepath.Join(s.BinDir, "fortio")} {
		if err := os.Symlink(target, path("podbin", name)); err != nil {
			return err
		}
	}
	istiodXDS := fmt.Sprintf("127.0.0.1:%d", p.istiodGRPC)
	kwokEnv := withEnv(os.Environ(),
		"PATH="+path("podbin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+s.Kubeconfig,
		"LABRUN_SANDBOX_DIR="+s.Dir,
		"LABRUN_STANDIN_FIXTURES="+path("standin"),
		"LABRUN_ISTIOD_XDS="+istiodXDS)
	if s.meshKubeconfig != "" {
		// One of several clusters: a fixture may name another cluster's addresses (standin/refs.go).
		kwokEnv = withEnv(kwokEnv, "LABRUN_MESH_KUBECONFIG="+s.meshKubeconfig)
	}
	kwokArgs := []string{"-c", filepath.Join(s.bins.DataDir, "kwok-stages.yaml")}
	if s.podCIDR != "" {
		kwokArgs = append(kwokArgs, "--cidr="+s.podCIDR) // pod IPs apart from the other clusters'
	}
	if err := s.start("kwok", s.Dir, kwokEnv, "kwok", append(kwokArgs,
		"--kubeconfig="+s.Kubeconfig, "--manage-all-nodes=true",
		"--enable-crds=Exec,ClusterExec,Logs,ClusterLogs,PortForward,ClusterPortForward",
		"--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", p.kwok),
		fmt.Sprintf("--server-address=127.0.0.1:%d", p.kwok),
		"--tls-cert-file="+path("kwok.crt"), "--tls-private-key-file="+path("kwok.key"))...); err != nil {
		return err
	}

	// istiod
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	mesh := "defaultConfig:\n  discoveryAddress: istiod.istio-system.svc:15012\naccessLogFile: /dev/stdout\n"
	if err := os.WriteFile(path("mesh.yaml"), []byte(mesh), 0o644); err != nil {
		return err
	}
	s.IstiodXDS = istiodXDS
	s.IstiodHTTP = fmt.Sprintf("127.0.0.1:%d", p.istiodHTTP)
	// Gateway API on: its standard CRDs are installed, and istiod translates Gateways and routes and
	// writes their status as on a cluster. The deployment controller stays off: it renders gateway
	// Deployments from the Helm chart's injection templates (ConfigMap istio-sidecar-injector),
	// which the sandbox does not have; for waypoints the waypoint deployment stand-in
	// (waypoint.go) creates them instead. Ambient is on (PILOT_ENABLE_AMBIENT): istiod serves the
	// istio-waypoint GatewayClass, binds services to waypoints by the istio.io/use-waypoint label
	// and sends a waypoint its config. There is no ztunnel and no istio-cni: nothing captures
	// traffic, and istiod sends workload (WDS) config to no one. Sidecars do not send HBONE
	// (PILOT_ENABLE_SENDING_HBONE=false), as in the sidecar-only meshes Kit A and Kit B were
	// recorded on: with it on (ambient's default) istiod moves every sidecar cluster's transport
	// socket into transport_socket_matches (hbone, user), and a DestinationRule's TLS origination
	// is no longer a cluster's transport_socket. Waypoints send HBONE whatever this says.
	istiodEnv := withEnv(os.Environ(), "POD_NAMESPACE=istio-system", "POD_NAME=istiod-0", "REVISION=default",
		"PILOT_ENABLE_GATEWAY_API=true", "PILOT_ENABLE_GATEWAY_API_STATUS=true",
		"PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER=false",
		"PILOT_ENABLE_AMBIENT=true", "PILOT_ENABLE_SENDING_HBONE=false", "KUBECONFIG="+s.Kubeconfig)
	if s.ClusterID != "" {
		// One of several clusters: istiod names its own cluster so, and the remote secrets
		// of the others name theirs (UpClusters).
		istiodEnv = withEnv(istiodEnv, "CLUSTER_ID="+s.ClusterID)
	}
	if err := s.start("istiod", path("istiod"), istiodEnv, "pilot-discovery", "discovery",
		"--kubeconfig="+s.Kubeconfig, "--meshConfig="+path("mesh.yaml"),
		"--httpAddr="+s.IstiodHTTP, "--grpcAddr="+s.IstiodXDS,
		fmt.Sprintf("--secureGRPCAddr=127.0.0.1:%d", p.istiodSecureGRPC),
		fmt.Sprintf("--monitoringAddr=127.0.0.1:%d", p.istiodMonitoring),
		fmt.Sprintf("--httpsAddr=127.0.0.1:%d", p.istiodHTTPS),
		"--ctrlz_address=127.0.0.1", fmt.Sprintf("--ctrlz_port=%d", p.istiodCtrlz)); err != nil {
		return err
	}

	if err := s.createNode(ctx); err != nil {
		return err
	}
	// kwok v0.8.0 now and then panics while it starts (a nil map in its stage lifecycle's CEL
	// setup, lifecycle.(*Stage).init, seen once in ~40 CI runs on a loaded machine): it is
	// started again, at most twice, and its log keeps every try's output.
	for try := 1; ; try++ {
		err := s.waitHTTP(ctx, "kwok", fmt.Sprintf("https://127.0.0.1:%d/healthz", p.kwok), "", 60*time.Second)
		if err == nil {
			break
		}
		if !errors.Is(err, errExited) || try == 3 {
			return err
		}
		s.step(fmt.Sprintf("kwok exited while starting (%v); starting it again", err))
		if err := s.restart("kwok"); err != nil {
			return err
		}
	}
	s.step("kwok healthy")
	if err := s.waitNodeReady(ctx); err != nil {
		return err
	}
	s.step("node " + NodeName + " ready, untainted")
	if err := s.waitHTTP(ctx, "kube-controller-manager", fmt.Sprintf("https://127.0.0.1:%d/healthz", p.kcm), "", 60*time.Second); err != nil {
		return err
	}
	if err := s.waitHTTP(ctx, "kube-scheduler", fmt.Sprintf("https://127.0.0.1:%d/healthz", p.scheduler), "", 60*time.Second); err != nil {
		return err
	}
	s.step("kube-controller-manager and kube-scheduler healthy")
	if err := s.waitHTTP(ctx, "istiod", "http://"+s.IstiodHTTP+"/ready", "", 120*time.Second); err != nil {
		return err
	}
	s.step("istiod ready")
	return nil
}

// Apply server-side-applies multi-document YAML (or JSON) to the sandbox with the dynamic client,
// as field manager "labrun-sandbox". Namespaced objects without a namespace go to "default"; CRDs are
// waited for until Established.
func (s *Sandbox) Apply(ctx context.Context, manifests []byte) error {
	return s.apply.apply(ctx, manifests)
}

// stopGrace is how long a component may take to exit after SIGTERM before it is killed.
const stopGrace = 10 * time.Second

// Stop stops what the sandbox started, in reverse order (istiod … kube-apiserver, then etcd: the
// API server hangs on SIGTERM once etcd is gone), each with SIGTERM then SIGKILL after a grace
// period, and removes the temp dir (kept when LABRUN_SANDBOX_KEEP is set, for post-mortems). The
// error reports only what could not be stopped or removed. It is safe to call more than once.
func (s *Sandbox) Stop() error {
	s.stopOnce.Do(func() {
		if s.stopWatch != nil {
			s.stopWatch()
			s.watchers.Wait()
		}
		var errs []error
		for i := len(s.procs) - 1; i >= 0; i-- {
			p := s.procs[i]
			killed, err := p.stop(stopGrace)
			if err != nil {
				errs = append(errs, err)
			} else if killed {
				s.step(fmt.Sprintf("%s ignored SIGTERM for %s: killed", p.name, stopGrace))
			}
		}
		if os.Getenv("LABRUN_SANDBOX_KEEP") != "" {
			s.step("LABRUN_SANDBOX_KEEP is set: keeping " + s.Dir)
		} else if err := os.RemoveAll(s.Dir); err != nil {
			errs = append(errs, err)
		}
		s.stopInjector()
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// Logs returns the last n lines of each component's log, for failure reports.
func (s *Sandbox) Logs(n int) string {
	var b strings.Builder
	for _, p := range s.procs {
		state := "running"
		if done, err := p.exited(); done {
			state = fmt.Sprintf("exited: %v", err)
		}
		fmt.Fprintf(&b, "--- %s (%s), %s:\n%s\n", p.name, state, p.logPath, p.tail(n))
	}
	return b.String()
}

// failure decorates a start error with the components' log tails.
func (s *Sandbox) failure(err error) error {
	return fmt.Errorf("sandbox: %w\n%s", err, s.Logs(25))
}

// step reports progress with the time since Up began.
func (s *Sandbox) step(msg string) {
	fmt.Fprintf(s.progress, "sandbox: %5.1fs %s\n", time.Since(s.started).Seconds(), msg)
}

// start runs one component from the bin dir, logging to <Dir>/<name>.log.
func (s *Sandbox) start(name, dir string, env []string, bin string, args ...string) error {
	p, err := startProcess(s.Dir, dir, name, env, filepath.Join(s.BinDir, bin), args...)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, p)
	return nil
}

// KillAPIServer kills the kube-apiserver with SIGKILL, as a crash or a lost control plane
// does, and waits until it has exited; RestartAPIServer starts it again. For fault tests: the
// other components lose the API server meanwhile.
func (s *Sandbox) KillAPIServer() error {
	p := s.process("kube-apiserver")
	if p == nil {
		return errors.New("sandbox: no kube-apiserver")
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("sandbox: kube-apiserver (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// RestartAPIServer starts the kube-apiserver killed by KillAPIServer again, with the same
// flags (its port, etcd and certificates), and waits until it is ready.
func (s *Sandbox) RestartAPIServer(ctx context.Context) error {
	if err := s.restart("kube-apiserver"); err != nil {
		return err
	}
	return s.waitHTTP(ctx, "kube-apiserver", s.RESTConfig.Host+"/readyz", s.RESTConfig.BearerToken, 90*time.Second)
}

// restart starts the exited component called name again, with the same flags and environment.
func (s *Sandbox) restart(name string) error {
	for i, p := range s.procs {
		if p.name != name {
			continue
		}
		if done, _ := p.exited(); !done {
			return fmt.Errorf("sandbox: %s is running", name)
		}
		np, err := startProcess(p.logDir, p.dir, p.name, p.env, p.bin, p.args...)
		if err != nil {
			return err
		}
		s.procs[i] = np
		return nil
	}
	return fmt.Errorf("sandbox: no %s", name)
}

// process returns the started component called name.
func (s *Sandbox) process(name string) *process {
	for _, p := range s.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// waitHTTP polls url until it answers 200, the component exits, or timeout passes. TLS is not
// verified: every endpoint is a self-signed loopback one of this sandbox.
func (s *Sandbox) waitHTTP(ctx context.Context, name, url, token string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed, loopback, ours
		Proxy:           nil,
	}}
	defer client.CloseIdleConnections()
	var last string
	for {
		if p := s.process(name); p != nil {
			if done, err := p.exited(); done {
				return fmt.Errorf("%s exited while waiting for %s: %v (%w)", name, url, err, errExited)
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("%s not healthy after %s (%s): last answer: %s", name, timeout, url, last)
		}
	}
}

// createNode creates the kwok node and removes the not-ready taint the API server's admission adds:
// with the node lifecycle controller off, nothing else would, and pods would stay Pending.
func (s *Sandbox) createNode(ctx context.Context) error {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
			Labels:      map[string]string{"kubernetes.io/hostname": NodeName, "type": "kwok"},
		},
		Status: corev1.NodeStatus{Allocatable: resources, Capacity: resources},
	}
	if _, err := s.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node: %w", err)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := s.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var kept []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != corev1.TaintNodeNotReady {
				kept = append(kept, t)
			}
		}
		if len(kept) == len(n.Spec.Taints) {
			return nil
		}
		n.Spec.Taints = kept
		_, err = s.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

// waitNodeReady waits until kwok reports the node Ready and no not-ready taint is left.
func (s *Sandbox) waitNodeReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		n, err := s.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			ready := false
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready = true
				}
			}
			tainted := false
			for _, t := range n.Spec.Taints {
				if t.Key == corev1.TaintNodeNotReady {
					tainted = true
				}
			}
			if tainted {
				if err := s.createNode(ctx); err != nil {
					return err
				}
			}
			if ready && !tainted {
				return nil
			}
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("node %s not ready: %w", NodeName, err)
		}
	}
}

// kubeconfigYAML is a kubeconfig for the sandbox: context "sandbox", bearer token, TLS unverified
// (the API server's certificate is self-signed for this run).
func kubeconfigYAML(server, token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sandbox
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: sandbox
  user:
    token: %s
contexts:
- name: sandbox
  context:
    cluster: sandbox
    user: sandbox
current-context: sandbox
`, server, token)
}

// freePorts chooses n distinct loopback ports that are free now. They are released before the
// components bind them, so another process can take one in between (Up then starts again). To
// make that rare they are chosen at random below the kernel's ephemeral range, where the
// outgoing connections of every process on the machine (other sandboxes' included) take theirs.
func freePorts(n int) ([]int, error) {
	lo, hi := 10000, ephemeralStart()-1
	if hi-lo < 1000 {
		lo, hi = 0, 0 // no room below the range: let the kernel choose
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for tries := 0; len(out) < n; tries++ {
		port := 0
		if hi > 0 && tries < 50*n {
			port = lo + mathrand.IntN(hi-lo+1)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			if port != 0 {
				continue // taken: draw again
			}
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range (Linux's default when it
// cannot be read).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 32768
	}
	v, err := strconv.Atoi(f[0])
	if err != nil || v < 1024 {
		return 32768
	}
	return v
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// withEnv returns env with the given KEY=value entries set (replacing earlier ones).
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	keys := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// readData concatenates data files of the cache as one multi-document YAML.
func readData(dir string, names ...string) ([]byte, error) {
	var out []byte
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out = append(out, "\n---\n"...)
		out = append(out, b...)
	}
	return out, nil
}

// unstructuredObject builds an object for the dynamic client.
func unstructuredObject(gvk schema.GroupVersionKind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
