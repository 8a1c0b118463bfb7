package schema

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// waitCluster is a cluster whose object wait fails as the kube driver's does when its context
// ends: the last state it saw, then the context's cause.
type waitCluster struct{ Cluster }

func (waitCluster) WaitObjects(ctx context.Context, _ string, _ ObjectWait, _ time.Duration) error {
	<-ctx.Done()
	return fmt.Errorf("wait match ConfigMap lab/flags: it differs: data.b: want \"3\", got \"2\": %w", context.Cause(ctx))
}

type waitRuntime struct {
	Runtime
	warnings []string
}

func (r *waitRuntime) Target() *Target            { return &Target{Cluster: waitCluster{}} }
func (r *waitRuntime) Namespace(ns string) string { return "lab" }
func (r *waitRuntime) Warn(msg string)            { r.warnings = append(r.warnings, msg) }

// TestWaitKeepsLastStateOnTimeout: when the step's own timeout ends a wait match, the runner
// reports the timeout alone; the closest object's diff stays with the step as a warning.
func TestWaitKeepsLastStateOnTimeout(t *testing.T) {
	timedOut := errors.New("wait timed out after 1ms")
	ctx, cancel := context.WithTimeoutCause(context.Background(), time.Millisecond, timedOut)
	defer cancel()
	rt := &waitRuntime{}
	err := (&Wait{Match: Object{"apiVersion": "v1", "kind": "ConfigMap"}}).Run(ctx, rt)
	if !errors.Is(err, timedOut) {
		t.Fatalf("err = %v, want the timeout", err)
	}
	want := `wait match ConfigMap lab/flags: it differs: data.b: want "3", got "2"`
	if len(rt.warnings) != 1 || rt.warnings[0] != want {
		t.Errorf("warnings = %q, want [%q]", rt.warnings, want)
	}
}
