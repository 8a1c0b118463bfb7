package schema

// EveryNamespace are the objects that exist without any step making them, by kind: in every
// namespace, as soon as it is created (Kubernetes' root CA ConfigMap and default
// ServiceAccount, istiod's root certificate ConfigMap), and the Namespaces every cluster has.
// A wait for "any object of the kind" (neither name nor labels) of one of these kinds holds at
// once (dsl's kind-only-match lint); a delete of one is made again at once by its controller
// (the kube driver tells the new one by its uid).
var EveryNamespace = map[string][]string{
	"ConfigMap":      {"kube-root-ca.crt", "istio-ca-root-cert"},
	"ServiceAccount": {"default"},
	"Namespace":      {"default", "kube-system", "kube-public", "kube-node-lease"},
}
