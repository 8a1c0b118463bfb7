// Package gcfloor lets a short-lived process skip collections while its heap is small: no
// collection until the process holds a floor of memory, then the collector's proportional
// pacing (GOGC) as usual.
//
// Go's pacer first collects at a heap of 4 MiB × GOGC/100, and again each time the heap has
// grown by GOGC% over what the last cycle kept. A load that allocates a few hundred MB of
// short-lived CUE evaluation state while holding 20 MB live thus pays several full marks of
// that live state. Under a floor, a load that fits in it is collected only where it asks
// (runtime.GC between two builds, when little is live), or not at all.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Set makes the collector leave the heap alone until the process's memory reaches floor
// bytes (a soft memory limit, with GOGC off), and pace by percent, as GOGC=percent would,
// from the first cycle whose live heap grown by percent would pass the floor anyway: until
// then each cycle keeps less than floor×100/(100+percent) bytes live, so the collector works
// less than under percent alone. restore puts back the settings Set found; a cycle that ends
// after restore changes nothing.
func Set(floor int64, percent int) (restore func()) {
	return SetAfter(floor, percent, 1)
}

// SetAfter is Set, switching to pacing by percent only once cycles cycles in a row have kept
// that much live. A cycle in the middle of a build can mark what the build is about to drop
// (a 10,000-step run's load: 70 MB live at its first cycle, 35 MB at the next), and pacing
// from there lets the heap grow to that times 1+percent/100, over the floor; under the floor's
// limit instead, the next cycle comes when the heap reaches the floor again. It cannot make
// the collector spin on a live heap larger than the floor: that heap passes the threshold at
// every cycle, and only cycles-1 more run under the limit before the switch.
func SetAfter(floor int64, percent, cycles int) (restore func()) {
	s := &state{floor: floor, percent: percent, cycles: max(cycles, 1)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prevPercent = debug.SetGCPercent(-1)
	s.prevLimit = debug.SetMemoryLimit(floor)
	s.arm()
	activeMu.Lock()
	active = s
	activeMu.Unlock()
	return s.restore
}

// active is the state of the last Set not yet restored, for Boost.
var (
	activeMu sync.Mutex
	active   *state
)

// Boost paces the collector by percent instead of Set's until end is called, for work that
// makes only garbage which the caller collects as soon as it ends (a build whose value is let
// go once checked): collecting in its middle marks what is about to die. Under the floor the
// collector is off anyway, and a switch to pacing during the boost uses percent. Without a
// Set in force (the user's GOGC or GOMEMLIMIT), or once it is restored, it changes nothing.
func Boost(percent int) (end func()) {
	activeMu.Lock()
	s := active
	activeMu.Unlock()
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restored {
		return func() {}
	}
	s.boost = percent
	if s.pacing {
		debug.SetGCPercent(percent)
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.boost = 0
		if s.pacing && !s.restored {
			debug.SetGCPercent(s.percent)
		}
	}
}

type state struct {
	mu          sync.Mutex
	floor       int64
	percent     int
	prevPercent int
	prevLimit   int64
	pacing      bool // the floor handed over to pacing by percent
	restored    bool
	boost       int // Boost's percent while it lasts, else 0
	cycles      int // how many cycles in a row must keep enough live to switch (SetAfter)
	over        int // how many of the last cycles did
}

// sentinel is allocated for each cycle; its cleanup runs after the cycle that finds it
// unreachable. It holds a pointer and is larger than 16 bytes, so that it is never combined
// with other objects in one tiny block (whose cleanups may never run).
type sentinel struct {
	_ *byte
	_ [56]byte
}

func (s *state) arm() {
	runtime.AddCleanup(new(sentinel), (*state).cycle, s)
}

// cycle runs after each collection until pacing by percent: it switches once the live heap
// has been large enough for percent to keep the heap above the floor (in s.cycles cycles in a
// row), and waits for the next cycle otherwise.
func (s *state) cycle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pacing || s.restored {
		return
	}
	live := liveHeap()
	if live >= 0 && live > s.floor/int64(100+s.percent)*100 {
		s.over++
	} else {
		s.over = 0
	}
	if live < 0 || s.over >= s.cycles {
		s.pacing = true
		percent := s.percent
		if s.boost > 0 {
			percent = s.boost
		}
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(s.prevLimit)
		return
	}
	s.arm()
}

func (s *state) restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	activeMu.Lock()
	if active == s {
		active = nil
	}
	activeMu.Unlock()
	s.restored = true
	debug.SetGCPercent(s.prevPercent)
	debug.SetMemoryLimit(s.prevLimit)
}

// liveHeap is the heap the last cycle marked live, -1 if the runtime does not say.
func liveHeap() int64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() > math.MaxInt64 {
		return -1
	}
	return int64(sample[0].Value.Uint64())
}
