package kube

import (
	"fmt"
	"strconv"
	"strings"

	"labrun.dev/labrun/schema"
)

// notObserved is an object whose status its controller wrote before observing the object's
// current generation (schema.ErrNotObserved).
type notObserved struct {
	generation int64
	// seen says what the status says instead: "status.observedGeneration is 1", ...
	seen string
}

func (e *notObserved) Error() string {
	return fmt.Sprintf("its controller had not observed generation %d yet (%s)", e.generation, e.seen)
}

func (e *notObserved) Is(target error) bool { return target == schema.ErrNotObserved }

// writesObservedGeneration are the kinds (group/kind) whose controller always writes
// status.observedGeneration: without it, their status is not yet the controller's.
var writesObservedGeneration = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true,
}

// unobserved says whether obj's status is not yet about its current generation
// (metadata.generation): its status.observedGeneration is behind it, or absent on a kind whose
// controller always writes one; or, without status.observedGeneration, the newest
// observedGeneration of its status.conditions is behind it. An object without a generation or
// whose status says nothing of one (a ConfigMap, a custom resource no controller writes the
// status of) is taken as it is, and so is one being deleted: nil.
func unobserved(obj map[string]any) *notObserved {
	md, _ := obj["metadata"].(map[string]any)
	gen, ok := generationOf(md["generation"])
	if !ok || gen <= 0 || md["deletionTimestamp"] != nil {
		// No generation; or an object on its way out (a pod's deletion bumps its generation,
		// which nothing may observe before it is gone): its status is what there is.
		return nil
	}
	status, _ := obj["status"].(map[string]any)
	if og, ok := status["observedGeneration"]; ok && og != nil {
		if n, ok := generationOf(og); ok && n < gen {
			return &notObserved{generation: gen, seen: fmt.Sprintf("status.observedGeneration is %d", n)}
		}
		return nil
	}
	newest, found := int64(0), false
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if n, ok := generationOf(cm["observedGeneration"]); ok {
			newest, found = max(newest, n), true
		}
	}
	switch {
	case found && newest < gen:
		return &notObserved{generation: gen, seen: fmt.Sprintf("its newest status.conditions observedGeneration is %d", newest)}
	case found:
		return nil
	}
	apiVersion, _ := obj["apiVersion"].(string)
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	if kind, _ := obj["kind"].(string); writesObservedGeneration[group+"/"+kind] {
		return &notObserved{generation: gen, seen: "its status has no observedGeneration"}
	}
	return nil
}

// generationOf reads a generation as unstructured content holds it (int64; float64 after a
// JSON round trip; a string in the status Istio writes, whose int64 is in proto JSON).
func generationOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// readsStatus says whether a get's path reads (or holds) an object's status: the whole object,
// or a path under status.
func readsStatus(path string) bool {
	return path == "" || path == "status" || strings.HasPrefix(path, "status.") || strings.HasPrefix(path, `"status"`)
}

// wantsStatus says whether a partial object (wait: match or absent) has fields under status.
func wantsStatus(want map[string]any) bool {
	_, ok := want["status"]
	return ok
}
