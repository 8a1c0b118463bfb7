package interp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// A config step's until judges each read by the step's own name: reads that fail (the cluster
// is not pushed yet) and reads whose value does not satisfy it are tried again every interval,
// on the run's clock; the last value is what expectations see.
func TestConfigUntil(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "cfg", config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds[0]", until: "cfg.max_connections >= 3", interval: "2s"}}]
	expect: ["cfg.max_connections == 3"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ConfigValue: func(req schema.Config, n int) (any, error) {
			if n < 2 {
				return nil, errors.New("no cluster \"c\" in the config dump (3 clusters, all static: istiod has not pushed this proxy its config yet)")
			}
			return map[string]any{"max_connections": float64(n - 1)}, nil // 1 at the 3rd read, 3 at the 5th
		}}
		rec, took := runTimed(w, sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		// Reads at 0, 2, 4, 6, 8 s: the fifth holds.
		if took != 8*time.Second {
			t.Errorf("until held after %v, want 8s", took)
		}
		if n := strings.Count(strings.Join(w.Calls(), "\n"), "config c"); n != 5 {
			t.Errorf("%d reads, want 5: %q", n, w.Calls())
		}
	})
}

// An until that never holds ends with the step's timeout, fails the run (what it read is not
// as expected: exit 1, not an infrastructure error) and says why it last did not hold. The
// timeout falls between two reads (reads at 0 s ... 5 s, timeout 5.5 s): a timeout at a read's
// instant races that read's timer, and the count of reads would be either.
func TestConfigUntilTimesOut(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "cfg", timeout: "5500ms", config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds[0]", until: "cfg.max_connections == 1"}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ConfigValue: func(schema.Config, int) (any, error) {
			return map[string]any{"max_connections": 4294967295.0}, nil
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Failed {
			t.Fatalf("an until that never holds: outcome %s, want failed (%s)", rec.Outcome, rec.Error)
		}
		var msg string
		for _, s := range rec.Steps {
			msg += s.Error + " " + strings.Join(s.Warnings, "; ")
		}
		if !strings.Contains(msg, "config until cfg.max_connections == 1: config timed out after 5.5s after 6 reads; last:") || !strings.Contains(msg, "4294967295") {
			t.Errorf("error: %s", msg)
		}
	})
}

// A wait's own timeout keeps why its expression last did not hold: the runner reports the
// timeout and what the wait adds to it, not the timeout alone.
func TestWaitUntilTimeoutKeepsTheReason(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "bg", background: true, sleep: "10s"},
		{name: "b", every: "1s", while: "bg", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{wait: {until: "b.last.upstream_rq_total > 1000000"}, timeout: "2500ms"},
	]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		var s *interp.StepRecord
		for _, x := range rec.Steps {
			if x.Kind == "wait" {
				s = x
			}
		}
		if s.Outcome != interp.TimedOut {
			t.Fatalf("wait outcome %s, want timed out (%s)", s.Outcome, s.Error)
		}
		if !strings.HasPrefix(s.Error, "wait timed out after 2.5s; last: ") || !strings.Contains(s.Error, "upstream_rq_total") {
			t.Errorf("wait error %q: want the timeout and the last reason", s.Error)
		}
	})
}

// A config step's reflects reads until the cluster carries the DestinationRule's mark (istiod's
// push has reached the proxy): reads that carry another rule's mark, or none, are tried again;
// with until, both must hold. The fake driver stands in for the Envoy admin.
func TestConfigReflects(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "cfg", config: {admin: "http://127.0.0.1:15000", cluster: "c", interval: "2s",
		reflects: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "new", spec: host: "backend"}}}]
	expect: ["cfg.lb_policy == \"ROUND_ROBIN\""]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ConfigValue: func(req schema.Config, n int) (any, error) {
			marks := []string{"", "/apis/networking.istio.io/v1/namespaces/lab/destination-rule/old", "/apis/networking.istio.io/v1/namespaces/lab/destination-rule/new"}
			c := map[string]any{"name": "c", "lb_policy": "ROUND_ROBIN"}
			if m := marks[min(n, 2)]; m != "" {
				c["metadata"] = map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{"config": m}}}
			}
			return c, nil
		}}
		rec, took := runTimed(w, sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if took != 4*time.Second {
			t.Errorf("reflects held after %v, want 4s (the third read)", took)
		}
	})
}

// A reflects that never holds ends with the step's timeout, fails the run (the proxy's config
// was read and does not carry the object: exit 1, not an infrastructure error) and says what
// the last read carried.
func TestConfigReflectsTimesOut(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "cfg", timeout: "3500ms", config: {admin: "http://127.0.0.1:15000", cluster: "c", reflects: {kind: "DestinationRule", name: "new"}}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ConfigValue: func(schema.Config, int) (any, error) {
			return map[string]any{"metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
				"config": "/apis/networking.istio.io/v1/namespaces/lab/destination-rule/old"}}}}, nil
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Failed {
			t.Fatalf("a reflects that never holds: outcome %s, want failed (%s)", rec.Outcome, rec.Error)
		}
		var msg string
		for _, s := range rec.Steps {
			msg += s.Error + " " + strings.Join(s.Warnings, "; ")
		}
		if want := "config reflects DestinationRule lab/new: config timed out after 3.5s after 4 reads; last: cluster c carries DestinationRule lab/old, not lab/new"; !strings.Contains(msg, want) {
			t.Errorf("error: %s\nwant it to contain %s", msg, want)
		}
	})
}

// A reflects whose resource carries the mark while its path selects nothing in it errs after
// a few reads, saying so: the push has come, and the path is wrong (a misspelt map key, an
// item that is not there). It was read again until the step's timeout (5 min by default), to
// end with the path's error. The fake driver stands in for the Envoy admin.
func TestConfigReflectsPathAfterMark(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "cfg", timeout: "60s", config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds[1]",
		reflects: {kind: "DestinationRule", name: "new"}}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		marked := map[string]any{"name": "c", "metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
			"config": "/apis/networking.istio.io/v1/namespaces/lab/destination-rule/new"}}}}
		w := &fakes.World{
			ConfigValue: func(schema.Config, int) (any, error) {
				return nil, errors.New("config: circuit_breakers.thresholds has no item 1 (1 item)")
			},
			ConfigResource: func(_ schema.Config, n int) any {
				if n == 0 {
					return map[string]any{"name": "c"} // the push has not come yet
				}
				return marked
			},
		}
		rec, took := runTimed(w, sc)
		if rec.Outcome != interp.Errored {
			t.Fatalf("outcome %s, want errored (%s)", rec.Outcome, rec.Error)
		}
		if took != 4*time.Second {
			t.Errorf("the step ended after %v, want 4s (the fourth read of the marked resource)", took)
		}
		if want := "has no item 1 (1 item); the resource carries DestinationRule lab/new (istiod's push of it has come) and 4 reads of it in a row selected nothing at this path: check the path"; !strings.Contains(rec.Error, want) {
			t.Errorf("error: %s\nwant it to contain %s", rec.Error, want)
		}
	})
}

// A config value is recorded as Envoy wrote it, and read through Envoy's types: a field Envoy
// left out at its default reads as that default (an enum by its first value's name, a number
// 0, a list []), also below an Any whose "@type" names its message, while presence (in, len)
// sees what Envoy wrote. The fake driver stands in for the Envoy admin.
func TestConfigReadsDefaults(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "cl", config: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "eds", config: {admin: "http://127.0.0.1:15000", endpoints: "c", path: "endpoints[priority=0]"}},
	]
	expect: [
		"cl.lb_policy == \"ROUND_ROBIN\"",
		"cl.respect_dns_ttl == false && len(cl.health_checks) == 0",
		"!(\"lb_policy\" in cl) && len(cl) == 3",
		"cl.outlier_detection == nil",
		"cl.transport_socket.typed_config.sni == \"\"",
		"cl.transport_socket.typed_config.common_tls_context.alpn_protocols == []",
		"eds.locality.zone == \"a\" && eds.priority == 0",
	]
}`)
	w := &fakes.World{ConfigValue: func(req schema.Config, n int) (any, error) {
		if req.Endpoints != "" {
			// What the driver records for path "endpoints[priority=0]" of a load assignment
			// whose first locality has no priority printed (it is 0).
			return map[string]any{"locality": map[string]any{"zone": "a"}}, nil
		}
		return map[string]any{"name": "c", "type": "EDS", "transport_socket": map[string]any{
			"name": "envoy.transport_sockets.tls",
			"typed_config": map[string]any{
				"@type":              "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
				"common_tls_context": map[string]any{},
			},
		}}, nil
	}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		for _, e := range rec.Expectations {
			t.Logf("%s: %s %s %s", e.Src, e.Outcome, e.Explanation, e.Reason)
		}
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
}

// An until that holds only because its collection is empty does not hold: the step reads
// again, and its timeout fails it (exit 1, as an until still false), saying the collection was
// empty. Before, it ended as an error of the run's (timed out, exit 3). Before, all(cfg, .max_connections >=
// 3) held at the first read, over no threshold: a wait for a state ended before anything
// existed (as kubectl wait says "no matching resources found"); so did none(), count() == 0,
// !any() and (first(cfg)?.… ?? default) until they were held to an expectation's rule too. An
// until that says what an empty one means (len(cfg) == 0 || …) holds as written.
func TestUntilAllOverEmpty(t *testing.T) {
	value := func(_ schema.Config, n int) (any, error) {
		if n < 2 {
			return []any{}, nil
		}
		return []any{map[string]any{"max_connections": float64(3)}}, nil // at the 3rd read
	}
	for _, c := range []struct {
		until, timeout string
		value          func(schema.Config, int) (any, error)
		reads          int    // 0: it times out
		err            string // of the step that timed out
	}{
		{"all(cfg, .max_connections >= 3)", "", value, 3, ""},
		{"count(cfg, .max_connections >= 3) == len(cfg)", "", value, 3, ""},
		{"none(cfg, .max_connections < 3)", "", value, 3, ""},
		{"count(cfg, .max_connections < 3) == 0", "", value, 3, ""},
		{"!any(cfg, .max_connections < 3)", "", value, 3, ""},
		{"(first(cfg)?.max_connections ?? 3) >= 3", "", value, 3, ""},
		{"len(cfg) == 0 || all(cfg, .max_connections >= 3)", "", value, 1, ""},
		{"len(cfg) == 0 || none(cfg, .max_connections < 3)", "", value, 1, ""},
		{"(first(cfg)?.max_connections ?? 3) >= 3", "5500ms", func(schema.Config, int) (any, error) { return []any{}, nil }, 0,
			"last: assert (first(cfg)?.max_connections ?? 3) >= 3: first(cfg) has no value yet: cfg is empty, so it has no item to take, and ?. or ?? would read its nil as an item's value (a field's default); an until does not hold over an empty collection, and waits for one with items (where an empty one is what it waits for, say so: len(cfg) == 0 || (first(cfg)?.max_connections ?? 3) >= 3)"},
		{"all(cfg, .max_connections >= 3)", "5500ms", func(schema.Config, int) (any, error) { return []any{}, nil }, 0,
			"config until all(cfg, .max_connections >= 3): config timed out after 5.5s after 6 reads; last: assert all(cfg, .max_connections >= 3): all(cfg, …) has no value yet: cfg is empty, so it holds of nothing, and would hold before any item exists"},
	} {
		timeout := ""
		if c.timeout != "" {
			timeout = `timeout: "` + c.timeout + `", `
		}
		t.Run(c.until, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "cfg", `+timeout+`config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds", until: "`+c.until+`", interval: "1s"}}]
	expect: ["cfg != nil"]
}`)
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{ConfigValue: c.value}
				rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
				reads := strings.Count(strings.Join(w.Calls(), "\n"), "config c")
				if c.reads > 0 && (reads != c.reads || rec.Steps[0].Outcome != interp.Passed) {
					t.Errorf("until %s: %s after %d reads (%s), want passed after %d", c.until, rec.Steps[0].Outcome, reads, rec.Steps[0].Error, c.reads)
				}
				// Its collection empty to the end, the state it waits for never came: the step
				// fails (exit 1) as an until still false does, not an error of the run's.
				if c.reads == 0 && (rec.Steps[0].Outcome != interp.Failed || rec.Outcome != interp.Failed || !strings.Contains(rec.Steps[0].Error, c.err)) {
					t.Errorf("until %s: %s, run %s (%s), want it to fail at its timeout: %s", c.until, rec.Steps[0].Outcome, rec.Outcome, rec.Steps[0].Error, c.err)
				}
			})
		})
	}
}

// runTimed runs the scenario on the fake world and says how long the run took (in a synctest
// bubble: the fake clock's time).
func runTimed(w *fakes.World, sc *dsl.Scenario) (*interp.Record, time.Duration) {
	start := time.Now()
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	return rec, time.Since(start)
}
