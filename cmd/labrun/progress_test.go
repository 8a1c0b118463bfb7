package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// lockedWriter lets the test read what the redraw goroutine writes.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestProgressTerminal: on a terminal a running load's status shows elapsed/planned,
// requests done/total, the rate and the errors, and is redrawn by itself (no event needed);
// samples and cleanup print as they come; NO_COLOR leaves out colour escapes.
func TestProgressTerminal(t *testing.T) {
	for _, noColor := range []string{"", "1"} {
		out := &lockedWriter{}
		p := &process{Stdout: out, IsTerminal: true, Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return noColor
			}
			return ""
		}}
		g := newProgress(p, false)
		clock := time.Unix(1000, 0)
		g.mu.Lock()
		g.now = func() time.Time { return clock }
		g.mu.Unlock()
		load := &interp.StepRecord{Path: "steps.0", Name: "fortio", Kind: "load"}
		g.event(interp.Event{Step: load})
		m := &schema.LoadMeter{Planned: 100, PlannedDuration: 4 * time.Second}
		m.Counting()
		g.event(interp.Event{Step: load, Load: m})
		for i := 0; i < 40; i++ {
			m.Done(i%10 != 0)
		}
		g.mu.Lock()
		clock = clock.Add(2 * time.Second)
		g.mu.Unlock()
		// The redraw is the progress's own ticker's, on the real clock: wait for it long enough
		// for a loaded machine (the loop ends as soon as it is drawn).
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), "40/100 req") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		smp := &interp.SnapshotRecord{Counters: schema.Stats{"rq_total": 40}}
		g.event(interp.Event{Step: &interp.StepRecord{Name: "g", Kind: "snapshot", Sample: 3, Start: time.Second}, Sample: smp})
		g.event(interp.Event{Cleanup: "removing process sleeper"})
		g.event(interp.Event{Cleanup: "removed process sleeper", CleanupDone: true})
		g.done()
		s := out.String()
		for _, want := range []string{"2.0s/4.0s", "40/100 req", "20 qps", "4 errors", "g #3 rq_total=40", "cleanup: removing process sleeper", "cleanup: removed process sleeper"} {
			if !strings.Contains(s, want) {
				t.Errorf("NO_COLOR=%q: progress lacks %q:\n%q", noColor, want, s)
			}
		}
		if hasColor := strings.Contains(s, "\033[3"); hasColor != (noColor == "") {
			t.Errorf("NO_COLOR=%q: colour escapes present: %v", noColor, hasColor)
		}
	}
}

// TestProgressPlain: not a terminal, no status block and no cursor movement, only lines.
func TestProgressPlain(t *testing.T) {
	out := &lockedWriter{}
	p := &process{Stdout: out, Getenv: func(string) string { return "" }}
	g := newProgress(p, false)
	s := &interp.StepRecord{Path: "steps.0", Name: "nap", Kind: "sleep", Summary: "1s"}
	g.event(interp.Event{Step: s})
	s.End, s.Outcome = time.Second, interp.Passed
	g.event(interp.Event{Step: s, Ended: true})
	g.done()
	want := "    +0.000s ▸ nap (sleep: 1s)\n    +1.000s ✓ nap (sleep: 1s) 1s\n"
	if out.String() != want {
		t.Errorf("plain progress:\n%q\nwant\n%q", out.String(), want)
	}
}

// TestFitFields: on a narrow terminal the least important fields go first; the step's name,
// its requests and its errors stay.
func TestFitFields(t *testing.T) {
	fs := []field{{"  ⠇ fortio", 0}, {" (load)", 5}, {" 2.8s/6.0s", 2}, {" [██████······]", 4}, {" · 140/300 req", 1}, {" · 47 qps", 3}, {" · 11 errors", 0}}
	for _, c := range []struct {
		width int
		want  string
	}{
		{100, "  ⠇ fortio (load) 2.8s/6.0s [██████······] · 140/300 req · 47 qps · 11 errors"},
		{60, "  ⠇ fortio 2.8s/6.0s · 140/300 req · 47 qps · 11 errors"},
		{40, "  ⠇ fortio · 140/300 req · 11 errors"},
		{30, "  ⠇ fortio · 11 errors"},
		{15, "  ⠇ fortio · 11\033[0m"},
	} {
		if got := fitFields(fs, c.width); got != c.want {
			t.Errorf("width %d:\n got %q\nwant %q", c.width, got, c.want)
		}
	}
}

// TestProgressHeader: the scenario's line says the run of the matrix, the failures so far, the
// step of the plan, the time of its span and the time left.
func TestProgressHeader(t *testing.T) {
	p := &process{Stdout: &lockedWriter{}, Getenv: func(string) string { return "" }}
	g := newProgress(p, false)
	clock := time.Unix(1000, 0)
	g.now = func() time.Time { return clock }
	g.began = clock
	g.scenario, g.steps, g.span = "s", 4, dsl.Offset{D: 10 * time.Second, Exact: true}
	g.ended["steps.0"] = true
	g.matrix = &matrixStatus{run: 3, runs: 6, failed: 1, rest: 30 * time.Second}
	clock = clock.Add(4 * time.Second)
	var b strings.Builder
	for _, f := range g.headerFields(clock) {
		b.WriteString(f.text)
	}
	if want := "  s · run 3/6 · 1 failed · step 2/4 · 4.0s/~10.0s · matrix ETA ~36s"; b.String() != want {
		t.Errorf("header\n got %q\nwant %q", b.String(), want)
	}
	if got := fmtETA(3*time.Minute + 24*time.Second); got != "3m20s" {
		t.Errorf("fmtETA = %s", got)
	}
}

// TestProgressNamesPodRead: a snapshot through a selector reads one of its pods, and may read
// another the next time; the console line named only the selector, so a delta across two
// Envoys looked like one pod's. The line names the pod read.
func TestProgressNamesPodRead(t *testing.T) {
	s := &interp.StepRecord{Name: "after", Kind: "snapshot", Summary: "envoy lab/{app=client} cluster c", Read: "pod lab/client-b"}
	if got := label(s); !strings.Contains(got, "read pod lab/client-b") {
		t.Errorf("label = %q, want it to name the pod read", got)
	}
}

// TestProgressNamesCluster: in a scenario of several clusters a step's progress line says
// which cluster it ran on (a snapshot of "the same" proxy on west and on east read alike).
func TestProgressNamesCluster(t *testing.T) {
	s := &interp.StepRecord{Name: "after", Kind: "snapshot", Summary: "envoy lab/{app=client} cluster c", Cluster: "west"}
	if got, want := label(s), "after (snapshot on west: envoy lab/{app=client} cluster c)"; got != want {
		t.Errorf("label = %q, want %q", got, want)
	}
}

// TestStepLabelKeepsTheURL: a step's line cut its summary at 70 characters, and the
// quickstart's perconn load read "→ http://gslb.lab.internal:184…" (its port 18480 cut, seen
// in tmux at 80 columns). Lines are wrapped at spaces since, so the summary is whole up to 200
// characters; a longer one is still cut.
func TestStepLabelKeepsTheURL(t *testing.T) {
	sum := "30 req × 2 conn at 10 qps no-keepalive → http://gslb.lab.internal:18480/echo"
	if got := label(&interp.StepRecord{Name: "perconn", Kind: "load", Summary: sum}); got != "perconn (load: "+sum+")" {
		t.Errorf("label %q, want the summary whole", got)
	}
	long := strings.Repeat("x", 300)
	if got := label(&interp.StepRecord{Name: "c", Kind: "exec", Summary: long}); !strings.HasSuffix(got, "…)") || len(got) > 220 {
		t.Errorf("label of a 300-character summary: %d bytes, %q", len(got), got[len(got)-10:])
	}
}

// TestSampleLineSig4: an every step's sample line wrote a stat with a fraction (a
// histogram's quantile) as Go's %g of 6 digits, "p99=1234.57", where every other number a
// user reads has at most 4 significant digits; a counter's whole value stays whole.
func TestSampleLineSig4(t *testing.T) {
	g := &progress{watch: []string{"upstream_rq_time.p99", "upstream_cx_max"}}
	smp := &interp.SnapshotRecord{Counters: schema.Stats{"upstream_cx_max": 4294967295}, Histograms: schema.Stats{"upstream_rq_time.p99": 1234.5678}}
	if got, want := g.sampleValues(smp), "upstream_rq_time.p99=1235 upstream_cx_max=4294967295"; got != want {
		t.Errorf("sample line %q, want %q", got, want)
	}
}
