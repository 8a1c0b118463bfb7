package schema

import (
	"context"
	"fmt"
	"strings"
)

// PodPick is what a selector picked for one driver call of a step that uses one pod of it (a
// snapshot, a config, an exec, a load from, a DNS server): the pods it used and every ready pod
// the selector matched. A selector of a Deployment of 3 replicas matches 3; the step reads the
// first by name alone, and what it records is that pod's, not the Deployment's.
type PodPick struct {
	// Namespace and Selector say what was asked.
	Namespace string
	Selector  string
	// Used are the pods the call used, by name (one; a load from several pods, that many).
	Used []string
	// Ready are the ready pods the selector matched, by name, sorted.
	Ready []string
}

// Others says what the pick left out, or "" when it used every ready pod the selector
// matched: "selector app=backend matched 3 ready pods in lab (backend-a, backend-b,
// backend-c) and the step used backend-a only".
func (p PodPick) Others() string {
	if len(p.Ready) <= len(p.Used) {
		return ""
	}
	whose := "that pod's"
	if len(p.Used) > 1 {
		whose = "those pods'"
	}
	return fmt.Sprintf("selector %s matched %d ready pods in %s (%s) and the step used %s only (the first by name): what it records is %s, not the other replicas'",
		p.Selector, len(p.Ready), p.Namespace, shortList(p.Ready, 5), strings.Join(p.Used, ", "), whose)
}

func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", … %d more", len(names)-n)
}

type podPickKey struct{}

// WithPodPicks returns ctx carrying note, which a driver calls with each pod a selector picks
// for the step whose Run ctx is given to (NotePodPick).
func WithPodPicks(ctx context.Context, note func(PodPick)) context.Context {
	return context.WithValue(ctx, podPickKey{}, note)
}

// NotePodPick tells the step whose ctx it is which pods a selector picked; nothing when no
// one asked (a driver called outside a step).
func NotePodPick(ctx context.Context, p PodPick) {
	if note, _ := ctx.Value(podPickKey{}).(func(PodPick)); note != nil {
		note(p)
	}
}
