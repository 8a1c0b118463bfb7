package report

import (
	"path/filepath"
	"sort"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

func sortStrings(s []string) { sort.Strings(s) }

// snapshotOrder returns snapshot names in the order they were taken.
func snapshotOrder(rec *interp.Record) []string {
	snaps := rec.Snapshots()
	names := sortedKeys(snaps)
	sort.SliceStable(names, func(i, j int) bool { return snaps[names[i]].At.Before(snaps[names[j]].At) })
	return names
}

func statNames(rec *interp.Record, snaps []string) []string {
	seen := map[string]bool{}
	for _, n := range snaps {
		s := rec.Snapshot(n)
		for _, m := range []map[string]float64{s.Counters, s.Gauges, s.Histograms} {
			for k := range m {
				seen[k] = true
			}
		}
	}
	return sortedKeys(seen)
}

func truncate(s string, n int) string { return dsl.Truncate(s, n+1) }

func relTo(from, to string) string {
	r, err := filepath.Rel(filepath.Dir(from), to)
	if err != nil {
		return to
	}
	return filepath.ToSlash(r)
}

// snapshotsBySource groups the snapshots by source, sources and snapshots in the order they
// were taken.
func snapshotsBySource(rec *interp.Record) (sources []string, bySource map[string][]string) {
	bySource = map[string][]string{}
	for _, n := range snapshotOrder(rec) {
		src := rec.Snapshot(n).Source
		if _, ok := bySource[src]; !ok {
			sources = append(sources, src)
		}
		bySource[src] = append(bySource[src], n)
	}
	return sources, bySource
}
