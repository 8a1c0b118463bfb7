package suite

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// Job is one run of a suite: its id, what it touches, and how long it is planned to take (a
// lower bound when a step's duration is known only at run time).
type Job struct {
	ID        string
	Resources []Resource
	Planned   time.Duration
	// NotSeen is what its commands may write that no resource holds (see NotSeen): the
	// schedule cannot keep it apart from another run's.
	NotSeen []string
}

// Overlap is why two jobs may not run at the same time: a resource both hold, at least one of
// them exclusively (A is the first job's hold, B the second's).
type Overlap struct {
	A, B Resource
}

func (o Overlap) String() string {
	if o.A.Shared || o.B.Shared {
		x, y := o.A, o.B
		if x.Shared {
			x, y = y, x
		}
		return fmt.Sprintf("%s (%s) while the other %s", x.Why, x.Pos, y.Why)
	}
	if o.A.Why == o.B.Why {
		return fmt.Sprintf("both: %s", o.A.Why)
	}
	return fmt.Sprintf("%s: one %s (%s), the other %s (%s)", o.A.Key, o.A.Why, o.A.Pos, o.B.Why, o.B.Pos)
}

// Overlaps returns the first resource that a and b both hold, one of them exclusively. Two
// keys name one resource when they are equal, when a wildcard host covers the other's host
// ("host *.example.com" and "host api.example.com"; "host *" covers every host), and when a
// host is a Service of a namespace the other holds ("host backend.lab.svc" and "namespace
// lab": configuring the Service's traffic changes what the namespace's run measures).
func Overlaps(a, b []Resource) (Overlap, bool) {
	// One key held by both first: the plainest reason.
	for _, same := range []func(x, y string) bool{func(x, y string) bool { return x == y }, sameResource} {
		for _, x := range a {
			for _, y := range b {
				if same(x.Key, y.Key) && !(x.Shared && y.Shared) {
					return Overlap{x, y}, true
				}
			}
		}
	}
	return Overlap{}, false
}

// sameResource says whether two resource keys name one resource (see Overlaps).
func sameResource(x, y string) bool {
	if x == y {
		return true
	}
	if ax, ok := strings.CutPrefix(x, "address "); ok {
		ay, ok := strings.CutPrefix(y, "address ")
		return ok && sameAddress(ax, ay)
	}
	if nx, ok := strings.CutPrefix(x, "namespace "); ok {
		ny, ok := strings.CutPrefix(y, "namespace ")
		if ok && (nx == "*" || ny == "*") {
			return true // a call to an IP: any namespace's pod or Service
		}
	}
	hx, xHost := strings.CutPrefix(x, "host ")
	hy, yHost := strings.CutPrefix(y, "host ")
	switch {
	case xHost && yHost:
		return hostCovers(hx, hy) || hostCovers(hy, hx)
	case xHost:
		return serviceOf(hx, y)
	case yHost:
		return serviceOf(hy, x)
	}
	return false
}

// sameAddress says whether two local addresses (host:port, "*" every address of the
// machine) are one: equal, or one port where either host is "*".
func sameAddress(x, y string) bool {
	hx, px, err1 := net.SplitHostPort(x)
	hy, py, err2 := net.SplitHostPort(y)
	if err1 != nil || err2 != nil {
		return x == y
	}
	return px == py && (hx == hy || hx == "*" || hy == "*")
}

// hostCovers says whether the host pattern w (a wildcard "*" or "*.suffix", or a name) covers
// host h, itself a name or a wildcard.
func hostCovers(w, h string) bool {
	if w == "*" {
		return true
	}
	suffix, ok := strings.CutPrefix(w, "*")
	if !ok {
		return false
	}
	if rest, ok := strings.CutPrefix(h, "*"); ok {
		return strings.HasSuffix(rest, suffix)
	}
	if strings.HasSuffix(h, ".svc") && strings.HasSuffix(suffix, ".local") {
		// A Service's name is cut at .svc (its cluster domain does not tell two apart):
		// "*.local" and "*.cluster.local" cover it.
		return true
	}
	return strings.HasSuffix(h, suffix)
}

// serviceOf says whether host (a Service, name.ns.svc) is in the namespace the key holds.
func serviceOf(host, key string) bool {
	ns, ok := strings.CutPrefix(key, "namespace ")
	if !ok {
		return false
	}
	parts := splitHost(host)
	return len(parts) == 3 && parts[2] == "svc" && parts[1] == ns
}

// Slot is a job's place in a planned schedule.
type Slot struct {
	Job int `json:"job"`
	// Lane is which of the parallel lanes runs it (1 to N).
	Lane int `json:"lane"`
	// Start and End are planned offsets from the start of the suite: lower bounds when a
	// job's span is one.
	Start time.Duration `json:"startNs"`
	End   time.Duration `json:"endNs"`
	// Order is when it starts among the jobs (0: first), as Run starts them.
	Order int `json:"order"`
	// After is the job it waited for because the two overlap (-1: it waited for no job, or
	// only for a free lane), and Why the overlap.
	After int    `json:"after"`
	Why   string `json:"why,omitempty"`
}

// Schedule plans jobs as Run runs them, taking each job's planned span as its duration: the
// order they start in, their lanes and planned starts, and what each waited for. parallel
// below 1 is 1.
func Schedule(jobs []Job, parallel int) []Slot {
	parallel = max(parallel, 1)
	slots := make([]Slot, len(jobs))
	type lane struct {
		job int // -1: free
		end time.Duration
	}
	lanes := make([]lane, parallel)
	for i := range lanes {
		lanes[i].job = -1
	}
	blocked := make([]Overlap, len(jobs))
	blocker := make([]int, len(jobs))
	for i := range blocker {
		blocker[i] = -1
	}
	var pending []int
	for i := range jobs {
		pending = append(pending, i)
	}
	now := time.Duration(0)
	order := 0
	for len(pending) > 0 {
		var rest []int
		for _, j := range pending {
			free := -1
			overlap := false
			for l, ln := range lanes {
				if ln.job < 0 {
					if free < 0 {
						free = l
					}
					continue
				}
				if o, ok := Overlaps(jobs[ln.job].Resources, jobs[j].Resources); ok {
					overlap, blocker[j], blocked[j] = true, ln.job, o
					break
				}
			}
			if overlap || free < 0 {
				rest = append(rest, j)
				continue
			}
			end := now + jobs[j].Planned
			lanes[free] = lane{job: j, end: end}
			slots[j] = Slot{Job: j, Lane: free + 1, Start: now, End: end, Order: order, After: blocker[j]}
			order++
			if blocker[j] >= 0 {
				slots[j].Why = blocked[j].String()
			}
		}
		pending = rest
		if len(pending) == 0 {
			break
		}
		// The next moment a lane frees: the earliest end among the running jobs (all of them
		// that end then).
		next := time.Duration(-1)
		for _, ln := range lanes {
			if ln.job >= 0 && (next < 0 || ln.end < next) {
				next = ln.end
			}
		}
		for l, ln := range lanes {
			if ln.job >= 0 && ln.end == next {
				lanes[l].job = -1
			}
		}
		now = next
	}
	return slots
}

// Run runs jobs as Schedule plans them: in order as lanes free up, at most parallel at once,
// never two that overlap. A job that overlaps one running waits for it, and a later job that
// overlaps none may start meanwhile. run runs job i (on its own goroutine) and returns false
// to stop the suite (--fail-fast): no job starts after that, nor after ctx ends. Run returns
// when every job it started has returned; started says which it started.
func Run(ctx context.Context, jobs []Job, parallel int, run func(i int) bool) (started []bool) {
	parallel = max(parallel, 1)
	started = make([]bool, len(jobs))
	type result struct {
		job int
		ok  bool
	}
	done := make(chan result)
	running := map[int]bool{}
	var pending []int
	for i := range jobs {
		pending = append(pending, i)
	}
	stopped := false
	for {
		if !stopped && ctx.Err() == nil {
			var rest []int
			for _, j := range pending {
				if len(running) >= parallel || overlapsAny(jobs, running, j) {
					rest = append(rest, j)
					continue
				}
				running[j], started[j] = true, true
				go func() { done <- result{j, run(j)} }()
			}
			pending = rest
		}
		if len(running) == 0 {
			return started
		}
		r := <-done
		delete(running, r.job)
		if !r.ok {
			stopped = true
		}
	}
}

func overlapsAny(jobs []Job, running map[int]bool, j int) bool {
	for r := range running {
		if _, ok := Overlaps(jobs[r].Resources, jobs[j].Resources); ok {
			return true
		}
	}
	return false
}
