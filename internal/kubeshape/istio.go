package kubeshape

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"labrun.dev/labrun/internal/didyoumean"
)

// istioData are the shapes of Istio's kinds (networking.istio.io, security.istio.io,
// telemetry.istio.io, extensions.istio.io), every version their CRDs serve, as FromCRD reads
// the CRDs of istio.io/api's IstioAPIVersion: written by ./genistio in groupsData's form
// (istioKinds says which is whose). vet checks Istio objects with them without a cluster; the
// fields Istio keeps free-form (x-kubernetes-preserve-unknown-fields: an EnvoyFilter's patch
// value, a google.protobuf.Struct) are opaque.
//
//go:embed istio.json.gz
var istioData []byte

var istio lazyShapes

// istioShapes are istioData's nodes (lazyShapes).
func istioShapes() []*Shape { return istio.of(istioData) }

// IstioGroup says group (of an apiVersion: "networking.istio.io/v1" or the group alone) is one
// of Istio's, whose kinds Istio returns.
func IstioGroup(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	switch group {
	case "networking.istio.io", "security.istio.io", "telemetry.istio.io", "extensions.istio.io":
		return true
	}
	return false
}

// Istio is the shape of an Istio kind's object (DestinationRule; also as kubectl takes a
// resource name: "destinationrule", "destinationrules") in apiVersion ("" for any: its stored
// version first), as Istio's CRDs of IstioAPIVersion say, and the kind as the API spells it;
// nil for another kind or a version Istio does not serve (IstioServes says why).
func Istio(apiVersion, kind string) (*Shape, string) {
	if apiVersion != "" && !IstioGroup(apiVersion) {
		return nil, ""
	}
	low := strings.ToLower(kind)
	for _, gk := range istioKinds {
		if (apiVersion != "" && apiVersion != gk.apiVersion) || !namesKind(low, gk.kind) {
			continue
		}
		if shapes := istioShapes(); gk.shape < len(shapes) {
			return shapes[gk.shape], gk.kind
		}
		return nil, ""
	}
	return nil, ""
}

// Known is the shape of a built-in kind's object (Builtin), or of an Istio kind's (Istio) when
// apiVersion names Istio's group: without one, a kind such as Gateway may be another group's
// (the Gateway API's gateway.networking.k8s.io).
func Known(apiVersion, kind string) (*Shape, string) {
	if sh, name := Builtin(apiVersion, kind); sh != nil {
		return sh, name
	}
	if !IstioGroup(apiVersion) {
		return nil, ""
	}
	return Istio(apiVersion, kind)
}

// From is what a message about an object of apiVersion says of where vet knows its kind from:
// " (Istio 1.30.8's CRDs)" for an Istio group's kind, whose fields are those of one Istio
// release (a newer one may have more), "" for another.
func From(apiVersion string) string {
	if !IstioGroup(apiVersion) {
		return ""
	}
	return " (Istio " + strings.TrimPrefix(IstioAPIVersion, "istio.io/api v") + "'s CRDs)"
}

// Newer is what a message about an Istio kind's field, value, kind or version that Istio's CRDs
// of IstioAPIVersion refuse ends with: a newer Istio may serve it, and how to ask the cluster's
// CRD instead (vet --server, and a run, judge it by the cluster's CRD); "" for another group.
func Newer(apiVersion string) string {
	if !IstioGroup(apiVersion) {
		return ""
	}
	return NewerHint()
}

// NewerHint is Newer's for an Istio kind.
func NewerHint() string {
	return "; if your cluster's Istio is newer than " + strings.TrimPrefix(IstioAPIVersion, "istio.io/api v") + ", labrun vet --server checks it against the cluster's CRD (and plan --server plans by it)"
}

// IstioServes says why apiVersion (of one of Istio's groups) serves no kind named kind, as
// Istio's CRDs of IstioAPIVersion have it, and which field is wrong: "kind" when the group has
// no such kind (with the kinds it has), "apiVersion" when not in that version (with the
// versions that serve it); "" when it serves it, or when apiVersion is no Istio group's.
func IstioServes(apiVersion, kind string) (field, msg string) {
	if !IstioGroup(apiVersion) || kind == "" {
		return "", ""
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	low := strings.ToLower(kind)
	var kinds, versions []string
	name := ""
	for _, gk := range istioKinds {
		g, v, _ := strings.Cut(gk.apiVersion, "/")
		if g != group {
			continue
		}
		if !slices.Contains(kinds, gk.kind) {
			kinds = append(kinds, gk.kind)
		}
		if namesKind(low, gk.kind) {
			name = gk.kind
			versions = append(versions, v)
			if gk.apiVersion == apiVersion {
				return "", ""
			}
		}
	}
	istioRelease := strings.TrimPrefix(IstioAPIVersion, "istio.io/api v")
	if name == "" {
		slices.Sort(kinds)
		msg := fmt.Sprintf("%s has no kind %s (Istio %s's CRDs)", group, kind, istioRelease)
		if g, k := IstioShortKind(kind); k != "" {
			if g != group {
				return "kind", msg + fmt.Sprintf(": %s is kubectl's short name for %s of %s, not a kind: expected kind %q with apiVersion %q", kind, k, g, k, g+"/v1")
			}
			return "kind", msg + fmt.Sprintf(": %s is kubectl's short name for %s, not a kind: expected kind %q", kind, k, k)
		}
		if m := didyoumean.Closest(kind, kinds); m != "" {
			return "kind", msg + fmt.Sprintf(": did you mean %s?", m) + Newer(apiVersion)
		}
		return "kind", msg + "; its kinds: " + strings.Join(kinds, ", ") + Newer(apiVersion)
	}
	if !strings.Contains(apiVersion, "/") {
		return "apiVersion", fmt.Sprintf("apiVersion %q has no version: expected %s/<version>, one of %s", apiVersion, group, strings.Join(versions, ", "))
	}
	want := versions[0] // the stored version, or v1 where Istio serves it
	if slices.Contains(versions, "v1") {
		want = "v1"
	}
	return "apiVersion", fmt.Sprintf("Istio serves %s as %s (Istio %s's CRDs), not %s: expected apiVersion %q%s", name, joinVersions(group, versions), istioRelease, apiVersion, group+"/"+want, Newer(apiVersion))
}

func joinVersions(group string, versions []string) string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = group + "/" + v
	}
	return strings.Join(out, ", ")
}
