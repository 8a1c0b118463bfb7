package kube

import (
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
)

// HostEnv is the environment a command on this machine gets on the kube target, so that
// kubectl, istioctl or curl there reach the cluster the run reaches: KUBECONFIG (the file
// given, else $KUBECONFIG as it is, else ~/.kube/config), LABRUN_CONTEXT (the context given,
// else the kubeconfig's current one) and LABRUN_NAMESPACE (the default namespace of steps
// that name none: -n, else the context's, else "default"; a step's own replaces it). A name
// that cannot be resolved (in-cluster, an unreadable kubeconfig) is left out.
func HostEnv(opts Options) map[string]string {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	env := map[string]string{}
	switch {
	case opts.Kubeconfig != "":
		path := opts.Kubeconfig
		if abs, err := filepath.Abs(path); err == nil {
			path = abs // a command may run in another directory
		}
		env["KUBECONFIG"] = path
	case getenv("KUBECONFIG") != "":
		env["KUBECONFIG"] = getenv("KUBECONFIG")
	case opts.Context != "" || getenv("KUBERNETES_SERVICE_HOST") == "":
		env["KUBECONFIG"] = clientcmd.RecommendedHomeFile
	}
	ns := opts.Namespace
	if path := env["KUBECONFIG"]; path != "" {
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(path)}
		if opts.Kubeconfig != "" {
			rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
		if raw, err := cc.RawConfig(); err == nil {
			ctxName := opts.Context
			if ctxName == "" {
				ctxName = raw.CurrentContext
			}
			if ctxName != "" {
				env["LABRUN_CONTEXT"] = ctxName
			}
		}
		if ns == "" {
			if n, _, err := cc.Namespace(); err == nil {
				ns = n
			}
		}
	}
	if ns == "" {
		ns = "default"
	}
	env["LABRUN_NAMESPACE"] = ns
	return env
}
