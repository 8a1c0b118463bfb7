package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// statusCluster is a cluster whose Deployment's status its controller writes at the unwritten-th
// read: before, a get of it fails with ErrNotObserved, as the kube driver's does.
type statusCluster struct {
	Cluster
	reads, unwritten int
}

var errNotObservedYet = fmt.Errorf("get Deployment lab/web: its controller had not observed generation 1 yet (its status has no observedGeneration): %w", ErrNotObserved)

func (c *statusCluster) Get(ctx context.Context, req Get) (any, error) {
	c.reads++
	if c.unwritten == 0 || c.reads < c.unwritten {
		return nil, errNotObservedYet
	}
	return map[string]any{"status": map[string]any{"observedGeneration": 1.0, "unavailableReplicas": 2.0}}, nil
}

// statusRuntime judges `(web.status?.unavailableReplicas ?? 0) == 0` over what was recorded.
type statusRuntime struct {
	Runtime
	cluster  *statusCluster
	recorded []any
	warnings []string
}

func (r *statusRuntime) Target() *Target            { return &Target{Cluster: r.cluster} }
func (r *statusRuntime) Namespace(ns string) string { return "lab" }
func (r *statusRuntime) Record(v any)               { r.recorded = append(r.recorded, v) }
func (r *statusRuntime) SawObjects([]ObjectRef)     {}
func (r *statusRuntime) Warn(msg string)            { r.warnings = append(r.warnings, msg) }
func (r *statusRuntime) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
		return nil
	}
}
func (r *statusRuntime) Judge() error {
	last := r.recorded[len(r.recorded)-1]
	st, _ := last.(map[string]any)["status"].(map[string]any)
	if n, _ := st["unavailableReplicas"].(float64); n != 0 {
		return judgedFalse{fmt.Errorf("unavailableReplicas is %v", n)}
	}
	return nil
}

// judgedFalse is an until the runner judged false (a failure, as interp's is).
type judgedFalse struct{ error }

func (judgedFalse) Failure() {}

// TestGetWaitsForObservedStatus: a get (with until or without) records and judges nothing of a
// status its controller has not yet written for the object (probe p8 #06: right after the
// apply, `(web.status?.unavailableReplicas ?? 0) == 0` held over an empty status, PASSED); it
// reads again, and when time runs out says the controller had not observed the generation.
func TestGetWaitsForObservedStatus(t *testing.T) {
	until := &Get{Kind: "Deployment", Name: "web", Until: "(web.status?.unavailableReplicas ?? 0) == 0", Interval: Duration(time.Millisecond)}
	t.Run("until, controller late then unavailable", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		rt := &statusRuntime{cluster: &statusCluster{unwritten: 3}}
		err := until.Run(ctx, rt)
		var unmet *Unmet
		if !errors.As(err, &unmet) || !strings.Contains(err.Error(), "unavailableReplicas is 2") {
			t.Errorf("err = %v; want unmet, unavailableReplicas is 2", err)
		}
		for _, v := range rt.recorded {
			if v == nil {
				t.Errorf("recorded an unobserved read: %v", rt.recorded)
			}
		}
	})
	t.Run("until, controller never observes", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		rt := &statusRuntime{cluster: &statusCluster{}}
		err := until.Run(ctx, rt)
		var unmet *Unmet
		if !errors.As(err, &unmet) || !strings.Contains(err.Error(), "had not observed generation 1 yet") || len(rt.recorded) != 0 {
			t.Errorf("err = %v, recorded %v; want unmet saying generation 1 was not observed, nothing recorded", err, rt.recorded)
		}
	})
	plain := &Get{Kind: "Deployment", Name: "web"}
	t.Run("plain get reads again", func(t *testing.T) {
		rt := &statusRuntime{cluster: &statusCluster{unwritten: 3}}
		if err := plain.Run(context.Background(), rt); err != nil || len(rt.recorded) != 1 || rt.recorded[0] == nil {
			t.Errorf("err = %v, recorded %v; want the observed status recorded", err, rt.recorded)
		}
	})
	t.Run("plain get, controller never observes", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		rt := &statusRuntime{cluster: &statusCluster{}}
		err := plain.Run(ctx, rt)
		if !errors.Is(err, context.DeadlineExceeded) || len(rt.recorded) != 0 ||
			len(rt.warnings) != 1 || !strings.Contains(rt.warnings[0], "had not observed generation 1 yet") {
			t.Errorf("err = %v, recorded %v, warnings %q; want the timeout, the generation not observed, nothing recorded", err, rt.recorded, rt.warnings)
		}
	})
}
