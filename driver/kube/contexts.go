package kube

import (
	"sort"

	"k8s.io/client-go/tools/clientcmd"
)

// Contexts lists the context names of the kubeconfig (kubeconfig, or $KUBECONFIG, then
// ~/.kube/config, as kubectl reads them), for shell completion of --context.
func Contexts(kubeconfig string) ([]string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := rules.Load()
	if err != nil {
		return nil, err
	}
	var out []string
	for name := range cfg.Contexts {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}
