package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"weak"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
)

// TestVetLetsEarlierBuildsGo: vet's load keeps the scenarios of every build, and each step
// answers where its fields are written (FieldPos). Answered from the build's evaluation, a
// scenario would hold that whole evaluation (the parsed files, the schema unified into them)
// until the load ends: vet of docs/ marked a live heap growing to 71 MB in each of its 21
// collections. The steps of every build but the last are given tables instead
// (detachEarlier), so an earlier build's files become garbage while its scenarios live on and
// still say where their fields are.
func TestVetLetsEarlierBuildsGo(t *testing.T) {
	dir := t.TempDir()
	const docs = 4
	paths := writeSpecDocs(t, dir, docs)
	var collected atomic.Int32
	builds := 0
	builtHook = func(inst *build.Instance) {
		builds++
		if len(inst.Files) > 0 {
			runtime.AddCleanup(inst.Files[0], func(int) { collected.Add(1) }, 0)
		}
	}
	defer func() { builtHook = nil }()
	res, err := Load(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if builds != docs || len(res.Scenarios) != docs {
		t.Fatalf("%d builds, %d scenarios: want %d of each", builds, len(res.Scenarios), docs)
	}
	for range 20 {
		runtime.GC()
		if collected.Load() >= docs-1 {
			break
		}
	}
	// The last build may stay attached: nothing is built after it.
	if got := collected.Load(); got < docs-1 {
		t.Errorf("%d of the first %d builds' files were collected while their scenarios lived: the scenarios hold their evaluations", got, docs-1)
	}
	for i, sc := range res.Scenarios {
		st := sc.Steps[0]
		if p := st.FieldPos("argv"); p.Line != 7 || filepath.Base(p.File) != fmt.Sprintf("d%d.md", i) {
			t.Errorf("%s: argv at %v, want d%d.md line 7", sc.Name, p, i)
		}
	}
	runtime.KeepAlive(res)
}

// TestDropEvaluationLetsEveryBuildGo: with Options.DropEvaluation (vet without --server or
// --parallel, which ask where a step's fields are written after the load), the last build's
// evaluation goes too when the load ends, and each step's FieldPos is then the step's own
// position. Kept, the repository's last package's evaluation (half of vet's live heap) was
// marked by every collection of the checks and the sweeps' combinations after the load.
func TestDropEvaluationLetsEveryBuildGo(t *testing.T) {
	dir := t.TempDir()
	const docs = 3
	paths := writeSpecDocs(t, dir, docs)
	var collected atomic.Int32
	builtHook = func(inst *build.Instance) {
		if len(inst.Files) > 0 {
			runtime.AddCleanup(inst.Files[0], func(int) { collected.Add(1) }, 0)
		}
	}
	defer func() { builtHook = nil }()
	res, err := Load(paths, Options{DropEvaluation: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		runtime.GC()
		if collected.Load() >= docs {
			break
		}
	}
	if got := collected.Load(); got < docs {
		t.Errorf("%d of the %d builds' files were collected while their scenarios lived: the last build's evaluation is held", got, docs)
	}
	for _, sc := range res.Scenarios {
		st := sc.Steps[0]
		if p := st.FieldPos("argv"); p != st.Pos {
			t.Errorf("%s: argv at %v, want the step's own position %v", sc.Name, p, st.Pos)
		}
	}
	runtime.KeepAlive(res)
}

// TestLoadCollectsEarlierBuildsBeforeTheNext: once a package is decoded, what its build
// evaluated is garbage, and the next package's build would grow the heap on top of it: under
// the CLI's heap floor nothing collects before that build ends, so vet examples/ scenarios/
// built scenarios/ over 15 MB of examples/' garbage (peak heap 66 MB instead of 51). Each
// build after a load's first starts with the earlier builds' garbage collected: the previous
// build's files are gone by then.
func TestLoadCollectsEarlierBuildsBeforeTheNext(t *testing.T) {
	dir := t.TempDir()
	const docs = 3
	paths := writeSpecDocs(t, dir, docs)
	defer func(c func()) { collectBeforeBuild = c }(collectBeforeBuild)
	collectBeforeBuild = runtime.GC // the test's builds are small: collect whatever there is
	var prev weak.Pointer[ast.File]
	builds := 0
	var held []int // the builds at whose start the previous build's files were still there
	buildStartHook = func() {
		if builds > 0 && prev.Value() != nil {
			held = append(held, builds)
		}
	}
	builtHook = func(inst *build.Instance) {
		builds++
		if len(inst.Files) > 0 {
			prev = weak.Make(inst.Files[0])
		}
	}
	defer func() { buildStartHook, builtHook = nil, nil }()
	res, err := Load(paths, Options{DropEvaluation: true})
	if err != nil {
		t.Fatal(err)
	}
	if builds != docs || len(res.Scenarios) != docs {
		t.Fatalf("%d builds, %d scenarios: want %d of each", builds, len(res.Scenarios), docs)
	}
	if len(held) > 0 {
		t.Errorf("builds %v began with the previous build's files not collected: its garbage was under the new build", held)
	}
	runtime.KeepAlive(res)
}

// TestGarbageWorthCollecting: the collection before a package's build pays when it frees at
// least what it marks. The cases are vet's, measured (MiB of heap objects, MiB live at the
// last collection): scenarios/ after examples/ began on 20.6 with 2.1 live (peak heap 66 MB
// without the collection, 51 with it); the documents of docs/ after scenarios/ began on
// 20-32 with 17-20 live, a cycle each marking as much as it freed (29 cycles instead of 21).
func TestGarbageWorthCollecting(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		heap, live float64
		want       bool
	}{
		{20.6, 2.1, true},   // scenarios/ after examples/
		{58.3, 8.1, true},   // docs/' first document after the sweeps' combinations
		{31.9, 16.7, false}, // a document of docs/ after the first
		{19.9, 17.8, false},
		{24.9, 18.9, false},
		{41.5, 19.1, true},
		{9, 0.5, true},
		{7, 0.5, false}, // under minBuildGarbage: not worth a cycle
		{2, 3, false},   // the heap under the last live figure (a stale one): nothing to say
	} {
		if got := garbageWorthCollecting(uint64(c.heap*mib), uint64(c.live*mib)); got != c.want {
			t.Errorf("heap %v MiB, %v MiB live: worth collecting %v, want %v", c.heap, c.live, got, c.want)
		}
	}
}

// TestLoadSparesSmallBuildsBesideALargeLiveHeap: with much live (vet of examples/ scenarios/
// docs/ holds 17-20 MB once scenarios/ is decoded), a small package's dead build is not worth
// a collection that marks all of it: the 16 MB rule (heap objects, live ones included) made
// one after each document of docs/ (24 cycles where 10 do).
func TestLoadSparesSmallBuildsBesideALargeLiveHeap(t *testing.T) {
	dir := t.TempDir()
	paths := writeSpecDocs(t, dir, 3)
	live := make([]byte, 24<<20) // what the earlier packages' scenarios would hold
	runtime.GC()
	forced := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(forced)
	before := forced[0].Value.Uint64()
	res, err := Load(paths, Options{DropEvaluation: true})
	if err != nil {
		t.Fatal(err)
	}
	metrics.Read(forced)
	if n := forced[0].Value.Uint64() - before; n > 0 {
		t.Errorf("the load of three small documents beside 24 MiB live collected %d times", n)
	}
	runtime.KeepAlive(live)
	runtime.KeepAlive(res)
}

// writeSpecDocs writes n Markdown documents in dir, each with one spec (scenario s<i>, one exec
// step), and returns their paths.
func writeSpecDocs(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%d.md", i))
		src := fmt.Sprintf("# doc %d\n\n```cue labrun\nimport \"labrun.dev/schema\"\n\ns%d: schema.#Scenario & {\n\tsteps: [{name: \"w\", exec: {argv: [\"true\"]}}]\n}\n```\n", i, i)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}
