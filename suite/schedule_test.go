package suite

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func ns(name string) Resource {
	return Resource{Key: "namespace " + name, Why: "declares namespace " + name}
}

func host(h string) Resource {
	return Resource{Key: "host " + h, Why: "applies a VirtualService for host " + h}
}

func TestOverlaps(t *testing.T) {
	mesh := Resource{Key: "mesh", Shared: true, Why: "runs on the cluster's mesh"}
	root := Resource{Key: "mesh", Why: "applies Sidecar default in istio-system"}
	for _, c := range []struct {
		name string
		a, b []Resource
		want bool
	}{
		{"two namespaces", []Resource{ns("a")}, []Resource{ns("b")}, false},
		{"one namespace", []Resource{ns("a"), ns("x")}, []Resource{ns("b"), ns("x")}, true},
		{"both on the mesh", []Resource{mesh}, []Resource{mesh}, false},
		{"a root policy beside a run on the mesh", []Resource{root}, []Resource{mesh}, true},
		{"nothing", nil, []Resource{ns("a")}, false},
		// probe p9 #04: a host's configuration beside the run of its Service's namespace, a
		// wildcard beside a host it covers.
		{"a Service's host beside its namespace", []Resource{host("backend.lab.svc")}, []Resource{ns("lab")}, true},
		{"a Service's host beside another namespace", []Resource{host("backend.lab.svc")}, []Resource{ns("lab2")}, false},
		{"a wildcard beside a host it covers", []Resource{host("*.example.com")}, []Resource{host("api.example.com")}, true},
		{"a wildcard beside a narrower one", []Resource{host("*.example.com")}, []Resource{host("*.api.example.com")}, true},
		{"a wildcard beside a host it does not cover", []Resource{host("*.example.com")}, []Resource{host("example.org")}, false},
		{"* beside any host", []Resource{host("*")}, []Resource{host("backend.lab.svc")}, true},
		{"*.local beside a Service", []Resource{host("*.local")}, []Resource{host("backend.lab.svc")}, true},
		{"*.lab.svc beside a Service of lab", []Resource{host("*.lab.svc")}, []Resource{host("backend.lab.svc")}, true},
		{"*.lab.svc beside a Service of lab2", []Resource{host("*.lab.svc")}, []Resource{host("backend.lab2.svc")}, false},
	} {
		if _, got := Overlaps(c.a, c.b); got != c.want {
			t.Errorf("%s: overlaps %v, want %v", c.name, got, c.want)
		}
		if _, got := Overlaps(c.b, c.a); got != c.want {
			t.Errorf("%s (swapped): overlaps %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSchedule: four lanes, eight jobs of 2 s, two of which share a namespace and one that
// changes the mesh: the shared ones never overlap in time, the mesh one runs alone, and the
// others fill the lanes in order.
func TestSchedule(t *testing.T) {
	mesh := Resource{Key: "mesh", Shared: true}
	var jobs []Job
	for i := range 8 {
		jobs = append(jobs, Job{ID: fmt.Sprint(i), Planned: 2 * time.Second, Resources: []Resource{mesh}})
	}
	jobs[1].Resources = append(jobs[1].Resources, ns("x"))
	jobs[2].Resources = append(jobs[2].Resources, ns("x"))
	jobs[6].Resources = []Resource{{Key: "mesh", Why: "applies Sidecar in istio-system"}}
	slots := Schedule(jobs, 4)
	want := []struct {
		start time.Duration
		after int
	}{
		{0, -1}, {0, -1}, {2 * time.Second, 1}, {0, -1}, {0, -1}, {2 * time.Second, -1}, {4 * time.Second, 2}, {2 * time.Second, -1},
	}
	for i, w := range want {
		if slots[i].Start != w.start || slots[i].After != w.after {
			t.Errorf("job %d: start %v after %d, want %v after %d (%+v)", i, slots[i].Start, slots[i].After, w.start, w.after, slots[i])
		}
	}
	for i := range slots {
		for j := range slots {
			if i == j {
				continue
			}
			a, b := slots[i], slots[j]
			concurrent := a.Start < b.End && b.Start < a.End
			if _, ov := Overlaps(jobs[i].Resources, jobs[j].Resources); ov && concurrent {
				t.Errorf("jobs %d and %d overlap and are planned at the same time: %+v %+v", i, j, a, b)
			}
			if concurrent && a.Lane == b.Lane {
				t.Errorf("jobs %d and %d share lane %d at the same time", i, j, a.Lane)
			}
		}
	}
	if slots[2].Why != "both: declares namespace x" {
		t.Errorf("job 2 waits because %q", slots[2].Why)
	}
}

// TestRun runs jobs that record how many run at once: never more than the lanes, never two
// that overlap, every job once; a job that fails stops the jobs not started (fail-fast).
func TestRun(t *testing.T) {
	var jobs []Job
	for i := range 12 {
		jobs = append(jobs, Job{ID: fmt.Sprint(i)})
	}
	for _, i := range []int{0, 3, 7} {
		jobs[i].Resources = []Resource{ns("shared")}
	}
	var mu sync.Mutex
	running := map[int]bool{}
	most, runs := 0, 0
	started := Run(context.Background(), jobs, 4, func(i int) bool {
		mu.Lock()
		for r := range running {
			if _, ok := Overlaps(jobs[r].Resources, jobs[i].Resources); ok {
				t.Errorf("job %d started while job %d, which it overlaps, runs", i, r)
			}
		}
		running[i] = true
		runs++
		most = max(most, len(running))
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		delete(running, i)
		mu.Unlock()
		return true
	})
	if runs != 12 || most != 4 {
		t.Errorf("%d runs, at most %d at once; want 12 and 4", runs, most)
	}
	for i, s := range started {
		if !s {
			t.Errorf("job %d not started", i)
		}
	}

	// Fail-fast on one lane: job 2 fails, so jobs 3 on never start.
	started = Run(context.Background(), jobs, 1, func(i int) bool { return i != 2 })
	for i, s := range started {
		if s != (i <= 2) {
			t.Errorf("fail-fast: job %d started %v", i, s)
		}
	}

	// A cancelled context starts nothing more.
	ctx, cancel := context.WithCancel(context.Background())
	started = Run(ctx, jobs, 2, func(i int) bool {
		if i == 0 {
			cancel()
		}
		<-ctx.Done() // no job returns before the cancel
		return true
	})
	n := 0
	for _, s := range started {
		if s {
			n++
		}
	}
	if n != 2 {
		t.Errorf("after the cancel, %d jobs had started, want the first 2", n)
	}
}
