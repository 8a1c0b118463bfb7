package kubeshape

import (
	"fmt"
	"strings"
)

// shortNames are the short names the API server gives the built-in resources (their
// APIResource.shortNames), which kubectl takes for them: kubectl get hpa, kind: "hpa".
var shortNames = map[string]string{
	"cs": "ComponentStatus", "cm": "ConfigMap", "ep": "Endpoints", "ev": "Event",
	"limits": "LimitRange", "ns": "Namespace", "no": "Node", "pvc": "PersistentVolumeClaim",
	"pv": "PersistentVolume", "po": "Pod", "rc": "ReplicationController", "quota": "ResourceQuota",
	"sa": "ServiceAccount", "svc": "Service",
	"ds": "DaemonSet", "deploy": "Deployment", "rs": "ReplicaSet", "sts": "StatefulSet",
	"hpa": "HorizontalPodAutoscaler", "cj": "CronJob", "csr": "CertificateSigningRequest",
	"ing": "Ingress", "netpol": "NetworkPolicy", "pdb": "PodDisruptionBudget",
	"pc": "PriorityClass", "sc": "StorageClass",
}

// istioShortNames are the short names Istio's CRDs give its kinds (their names.shortNames in
// istio.io/api's customresourcedefinitions.gen.yaml), by group and kind. kubectl takes them;
// labrun does not look them up (discovery's resources have no short names): a step that names
// dr fails when it runs.
var istioShortNames = map[string][2]string{
	"dr": {"networking.istio.io", "DestinationRule"}, "gw": {"networking.istio.io", "Gateway"},
	"se": {"networking.istio.io", "ServiceEntry"}, "vs": {"networking.istio.io", "VirtualService"},
	"we": {"networking.istio.io", "WorkloadEntry"}, "wg": {"networking.istio.io", "WorkloadGroup"},
	"ap": {"security.istio.io", "AuthorizationPolicy"}, "pa": {"security.istio.io", "PeerAuthentication"},
	"ra": {"security.istio.io", "RequestAuthentication"},
}

// IstioShortKind is the group and kind an Istio short name names ("dr": networking.istio.io,
// DestinationRule); "" for any other name.
func IstioShortKind(name string) (group, kind string) {
	gk := istioShortNames[strings.ToLower(name)]
	return gk[0], gk[1]
}

// ShortKind is the kind a built-in resource's short name names ("hpa": HorizontalPodAutoscaler),
// as kubectl takes it; "" for any other name.
func ShortKind(name string) string { return shortNames[strings.ToLower(name)] }

// removed are the API versions of built-in kinds that Kubernetes has stopped serving, by
// "apiVersion kind", with the release that removed them: every API server of a supported
// release refuses them (no kind X in that version). A group version another kind was added to
// since (storage.k8s.io/v1beta1's VolumeAttributesClass, admissionregistration.k8s.io/v1beta1's
// ValidatingAdmissionPolicy) is listed by kind.
var removed = map[string]string{
	"extensions/v1beta1 Deployment": "1.16", "extensions/v1beta1 DaemonSet": "1.16", "extensions/v1beta1 ReplicaSet": "1.16",
	"extensions/v1beta1 NetworkPolicy": "1.16", "extensions/v1beta1 PodSecurityPolicy": "1.16", "extensions/v1beta1 Ingress": "1.22",
	"apps/v1beta1 Deployment": "1.16", "apps/v1beta1 StatefulSet": "1.16", "apps/v1beta1 ControllerRevision": "1.16",
	"apps/v1beta2 Deployment": "1.16", "apps/v1beta2 StatefulSet": "1.16", "apps/v1beta2 DaemonSet": "1.16",
	"apps/v1beta2 ReplicaSet": "1.16", "apps/v1beta2 ControllerRevision": "1.16",
	"batch/v1beta1 CronJob": "1.25", "batch/v2alpha1 CronJob": "1.21",
	"autoscaling/v2beta1 HorizontalPodAutoscaler": "1.25", "autoscaling/v2beta2 HorizontalPodAutoscaler": "1.26",
	"policy/v1beta1 PodDisruptionBudget": "1.25", "policy/v1beta1 PodSecurityPolicy": "1.25",
	"networking.k8s.io/v1beta1 Ingress": "1.22", "networking.k8s.io/v1beta1 IngressClass": "1.22",
	"rbac.authorization.k8s.io/v1beta1 ClusterRole": "1.22", "rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding": "1.22",
	"rbac.authorization.k8s.io/v1beta1 Role": "1.22", "rbac.authorization.k8s.io/v1beta1 RoleBinding": "1.22",
	"discovery.k8s.io/v1beta1 EndpointSlice": "1.25", "events.k8s.io/v1beta1 Event": "1.25",
	"node.k8s.io/v1beta1 RuntimeClass": "1.25", "scheduling.k8s.io/v1beta1 PriorityClass": "1.22",
	"storage.k8s.io/v1beta1 CSIDriver": "1.22", "storage.k8s.io/v1beta1 CSINode": "1.22",
	"storage.k8s.io/v1beta1 StorageClass": "1.22", "storage.k8s.io/v1beta1 VolumeAttachment": "1.22",
	"storage.k8s.io/v1beta1 CSIStorageCapacity":             "1.27",
	"certificates.k8s.io/v1beta1 CertificateSigningRequest": "1.22", "coordination.k8s.io/v1beta1 Lease": "1.22",
	"admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration":   "1.22",
	"admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration": "1.22",
}

// Removed says why apiVersion is no version of kind (a kind, a resource name or a short name
// as Builtin takes it) that an API server serves: Kubernetes removed it, in which release, and
// what the kind's current apiVersion is; "" when it was not removed (or is not a built-in
// kind's). Its fields are not checked as the current version's: they differ (an
// extensions/v1beta1 Ingress's spec.backend.serviceName is networking.k8s.io/v1's
// spec.defaultBackend.service.name), and a step with it errs when it runs anyway.
func Removed(apiVersion, kind string) string {
	if apiVersion == "" {
		return ""
	}
	_, name := Builtin("", kind)
	if name == "" {
		return ""
	}
	since := removed[apiVersion+" "+name]
	if since == "" {
		return ""
	}
	msg := fmt.Sprintf("apiVersion %s of %s was removed in Kubernetes %s: no API server of a supported release serves it", apiVersion, name, since)
	group, _, _ := strings.Cut(apiVersion, "/")
	if current := CurrentAPIVersion(group, name); current != "" {
		return msg + fmt.Sprintf("; use apiVersion: %q (its fields may differ)", current)
	}
	return msg + fmt.Sprintf(" (%s has no current version)", name)
}

// CurrentAPIVersion is the apiVersion a built-in kind is served as: its version in group
// when group still serves it (events.k8s.io's Event is events.k8s.io/v1), else its group's
// preferred version (apps/v1, autoscaling/v2, networking.k8s.io/v1); "" for any other kind.
func CurrentAPIVersion(group, kind string) string {
	for _, gk := range groupKinds {
		if gk.kind == kind && strings.HasPrefix(gk.apiVersion, group+"/") {
			return gk.apiVersion
		}
	}
	for _, v := range []string{"v1", "apps/v1"} {
		if sh, _ := Builtin(v, kind); sh != nil {
			return v
		}
	}
	for _, gk := range groupKinds {
		if gk.kind == kind {
			return gk.apiVersion
		}
	}
	return ""
}
