package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// settings reads GOGC and the memory limit without changing them.
func settings() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// waitFor polls cond after a collection: cleanups run on a goroutine of their own once the
// cycle has ended.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 5*time.Second; {
		if cond() {
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("after 5s: %s", what)
}

var sink []byte

func TestNoCollectionUnderTheFloor(t *testing.T) {
	runtime.GC()
	restore := Set(256<<20, 400)
	defer restore()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	// 64 MiB of garbage in 64 KiB pieces: GOGC=400 alone would collect at about 16 MiB.
	for range 1024 {
		sink = make([]byte, 64<<10)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n != 0 {
		t.Errorf("%d collections while the heap grew by 64 MiB under a floor of 256 MiB, want 0", n)
	}
	if p, l := settings(); p != -1 || l != 256<<20 {
		t.Errorf("under the floor: GOGC %d, limit %d; want off (-1) and the floor", p, l)
	}
}

func TestSmallLiveHeapKeepsTheFloor(t *testing.T) {
	restore := Set(256<<20, 400)
	defer restore()
	runtime.GC() // little is live: 256 MiB / 5 is far more
	time.Sleep(50 * time.Millisecond)
	runtime.GC() // the cleanup of the first cycle has armed a second sentinel
	time.Sleep(50 * time.Millisecond)
	if p, l := settings(); p != -1 || l != 256<<20 {
		t.Errorf("after two cycles with a small live heap: GOGC %d, limit %d; want off and the floor", p, l)
	}
}

var live [][]byte

func TestLargeLiveHeapPacesByPercent(t *testing.T) {
	prevPercent, prevLimit := settings()
	restore := Set(20<<20, 400)
	defer restore()
	// 8 MiB live: ×5 passes the floor of 20 MiB, so the pacer takes over at 400%.
	for range 128 {
		live = append(live, make([]byte, 64<<10))
	}
	defer func() { live = nil }()
	runtime.GC()
	waitFor(t, "GOGC 400 and the limit as before", func() bool {
		p, l := settings()
		return p == 400 && l == prevLimit
	})
	restore()
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("after restore: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
}

// TestSetAfterWaitsForTheNextCycle: under SetAfter(…, 2) one cycle with a large live heap
// keeps the floor; a second in a row switches to pacing.
func TestSetAfterWaitsForTheNextCycle(t *testing.T) {
	prevPercent, prevLimit := settings()
	// A floor far above what the test holds: under one near it (20 MiB, with the test
	// binary's own memory), the limit started a cycle of its own, and the second cycle the
	// test counts on not having run yet had (seen once in a full test run).
	restore := SetAfter(96<<20, 400, 2)
	defer restore()
	for range 384 { // 24 MiB live: ×5 passes the floor of 96 MiB
		live = append(live, make([]byte, 64<<10))
	}
	defer func() { live = nil }()
	runtime.GC()
	time.Sleep(50 * time.Millisecond) // the first cycle's cleanup has run and armed another
	if p, l := settings(); p != -1 || l != 96<<20 {
		t.Errorf("after one cycle with a large live heap: GOGC %d, limit %d; want off and the floor", p, l)
	}
	runtime.GC()
	waitFor(t, "GOGC 400 and the limit as before after a second cycle", func() bool {
		p, l := settings()
		return p == 400 && l == prevLimit
	})
	restore()
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("after restore: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
}

func TestRestoreWins(t *testing.T) {
	prevPercent, prevLimit := settings()
	// 4 MiB live against a floor of 1 MiB: any cycle from now on would switch to 400.
	for range 64 {
		live = append(live, make([]byte, 64<<10))
	}
	defer func() { live = nil }()
	restore := Set(1<<20, 400)
	restore()
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Fatalf("after restore: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("a cycle after restore changed GOGC to %d, limit to %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
	if prevLimit != math.MaxInt64 {
		t.Logf("the test binary runs with a memory limit of %d", prevLimit)
	}
}

func TestBoostWithoutSetChangesNothing(t *testing.T) {
	prevPercent, prevLimit := settings()
	end := Boost(800)
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("Boost without Set: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
	end()
	restore := Set(1<<30, 400)
	restore()
	Boost(800)() // after restore: nothing either
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("Boost after restore: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
}

func TestBoostWhilePacing(t *testing.T) {
	prevPercent, prevLimit := settings()
	restore := Set(20<<20, 400)
	defer restore()
	for range 128 {
		live = append(live, make([]byte, 64<<10))
	}
	defer func() { live = nil }()
	runtime.GC()
	waitFor(t, "GOGC 400", func() bool { p, _ := settings(); return p == 400 })
	end := Boost(800)
	if p, _ := settings(); p != 800 {
		t.Errorf("during Boost(800): GOGC %d", p)
	}
	end()
	if p, _ := settings(); p != 400 {
		t.Errorf("after the boost: GOGC %d, want Set's 400", p)
	}
	restore()
	if p, l := settings(); p != prevPercent || l != prevLimit {
		t.Errorf("after restore: GOGC %d, limit %d; want %d, %d", p, l, prevPercent, prevLimit)
	}
}

func TestBoostUnderTheFloorPacesByItOnceSwitched(t *testing.T) {
	restore := Set(20<<20, 400)
	defer restore()
	end := Boost(800)
	if p, l := settings(); p != -1 || l != 20<<20 {
		t.Errorf("Boost under the floor: GOGC %d, limit %d; want off and the floor", p, l)
	}
	for range 128 {
		live = append(live, make([]byte, 64<<10))
	}
	defer func() { live = nil }()
	runtime.GC()
	waitFor(t, "GOGC 800 once switched during the boost", func() bool { p, _ := settings(); return p == 800 })
	end()
	if p, _ := settings(); p != 400 {
		t.Errorf("after the boost: GOGC %d, want Set's 400", p)
	}
}
