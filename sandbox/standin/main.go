// Command pilot-agent is the sandbox's Envoy admin stand-in: a test program, not Istio's agent.
//
// The sandbox has no Envoy and no container images, so kwok runs `kubectl exec POD -c istio-proxy --
// pilot-agent request GET <path>` as a local command, and this program answers in Envoy's place:
//
//   - config_dump is real: it connects to istiod's plaintext xDS port as the pod (namespace, name, pod
//     IP) and prints what istiod sends that pod, in Envoy's config_dump shape (snake_case proto JSON).
//     `resource=`, `name_regex=` (full RE2 match, like Envoy) and `include_eds` are honoured.
//   - everything else (stats, clusters, …) comes from fixture files a test wrote beforehand; each call
//     of the same path (query included) returns the next fixture of that path's series, the last one
//     repeating. Text stats fixtures honour `filter=` (RE2 partial match) and `type=`, and can be
//     served as `format=json`. See fixtures.go for the layout on disk.
//   - `POST logging?…` changes the pod's Envoy log levels as Envoy's /logging does (one query
//     parameter: `<logger>=<level>`, `paths=<logger>:<level>,…` or `level=<level>`) and answers
//     with the active loggers; the levels decide which replayed Envoy debug lines reach the pod's
//     log (logging.go). Any other POST is refused.
//
// The environment tells it which pod it serves (kwok itself passes nothing about the pod): POD_NAME
// and POD_NAMESPACE come from the per-pod kwok Exec the sandbox creates for every pod;
// LABRUN_STANDIN_FIXTURES, LABRUN_ISTIOD_XDS and KUBECONFIG come from the kwok process's environment.
// INSTANCE_IP, when set, is used as the pod IP instead of looking the pod up.
//
// Under any other name (fortio, bash, …: links the sandbox puts in the pods' PATH) it is the exec
// stand-in: a command run in a pod replays a recorded run when the test wrote one for that pod and
// command, and runs the real program otherwise (exec.go).
//
// Like the real `pilot-agent request`, the body goes to stdout followed by a newline; an unknown path
// or a failure exits 1 with the reason on stderr.
package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	// Linked into the pods' PATH under another name, this is the exec stand-in (exec.go).
	if name := filepath.Base(os.Args[0]); name != "pilot-agent" {
		os.Exit(execStandIn(name, os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = "usage: pilot-agent request [--debug-port N] GET <path> | POST logging?<query>  (Envoy admin stand-in of the labrun sandbox)"

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "request" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--debug-port" || a == "-debug-port":
			i++ // the stand-in has no ports: the value is accepted and ignored
		case strings.HasPrefix(a, "--debug-port="):
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) < 2 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	method, path := strings.ToUpper(rest[0]), strings.TrimPrefix(rest[1], "/")
	endpoint, query := splitPath(path)
	if method != "GET" && !(method == "POST" && endpoint == "logging") {
		fmt.Fprintf(stderr, "Error: stand-in: only GET and POST logging are served, not %s %s\n", method, path)
		return 1
	}
	env := environment{
		PodName:      os.Getenv("POD_NAME"),
		PodNamespace: os.Getenv("POD_NAMESPACE"),
		PodIP:        os.Getenv("INSTANCE_IP"),
		FixtureRoot:  os.Getenv("LABRUN_STANDIN_FIXTURES"),
		XDSAddress:   os.Getenv("LABRUN_ISTIOD_XDS"),
		Kubeconfig:   os.Getenv("KUBECONFIG"),
		Mesh:         os.Getenv("LABRUN_MESH_KUBECONFIG"),
	}
	var body string
	var err error
	if method == "POST" {
		body, err = servePost(env, os.Getenv("LABRUN_SANDBOX_DIR"), endpoint, query)
	} else {
		body, err = serve(env, path)
	}
	var he *httpError
	if errors.As(err, &he) {
		// What pilot-agent says of an admin answer over 399 (other than 404).
		fmt.Fprintf(stderr, "Error: %v\n", he)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: stand-in (%s/%s): %v\n", env.PodNamespace, env.PodName, err)
		return 1
	}
	fmt.Fprintln(stdout, body)
	return 0
}

// servePost answers a POST: only logging, whose state is the pod's (logging.go).
func servePost(env environment, sandboxDir, endpoint string, query url.Values) (string, error) {
	if env.PodName == "" || env.PodNamespace == "" {
		return "", fmt.Errorf("POD_NAME/POD_NAMESPACE not set: kwok ran this without the sandbox's per-pod Exec")
	}
	if endpoint != "logging" {
		return "", fmt.Errorf("POST %s is not served (only POST logging)", endpoint)
	}
	return postLogging(env, sandboxDir, query)
}

// environment is what the stand-in knows about the pod it answers for.
type environment struct {
	PodName, PodNamespace, PodIP string
	FixtureRoot                  string
	XDSAddress                   string
	Kubeconfig                   string
	// Mesh is the kubeconfig of every cluster of a sandbox of several, one context per cluster
	// ID (LABRUN_MESH_KUBECONFIG; "" in a sandbox of one): where {{… @cluster2}} looks.
	Mesh string
}

// serve answers one admin request: config_dump live from istiod, anything else from fixtures.
func serve(env environment, path string) (string, error) {
	if env.PodName == "" || env.PodNamespace == "" {
		return "", fmt.Errorf("POD_NAME/POD_NAMESPACE not set: kwok ran this without the sandbox's per-pod Exec " +
			"(was the pod created before the sandbox watched it, or exec'd too early?)")
	}
	endpoint, query := splitPath(path)
	if endpoint == "config_dump" {
		return configDump(env, query)
	}
	return fixtureResponse(env, endpoint, path, query)
}
