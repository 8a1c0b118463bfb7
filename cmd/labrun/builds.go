package main

import (
	"fmt"
	"slices"
	"strings"
)

// checkBuilds refuses records of one labrun run (one invocation) or of one split of shards
// that name two labrun builds (interp.Record's Labrun), and returns a warning where records
// of several labrun runs do. One labrun process is one build: its records naming two were
// edited (or one stands for another's, its invocation copied in). The shards of a split are
// one run cut in parts: parts measured by two builds' code are not one run's, even if each is
// judged again by this labrun; run every shard with one build. Records of separate runs may
// be made by two builds (yesterday's run and today's): merge judges each again with its own
// rules, but what each measured is what its build measured, so stderr says it. Before, the
// record kept no build, and shards run by two labrun versions merged without a word. A
// record made before records kept the build (empty) is not compared with others, but one
// run's or split's records that differ in it (one without it) are refused: one labrun wrote
// them all. Two builds from one revision both "modified" are not told apart.
func checkBuilds(cwd string, all []mergedRecord) (warning string, err error) {
	type group struct {
		what   string
		builds []string
		froms  map[string][]string
	}
	groups := map[string]*group{}
	var order []string
	add := func(key, what string, m mergedRecord) {
		g := groups[key]
		if g == nil {
			g = &group{what: what, froms: map[string][]string{}}
			groups[key] = g
			order = append(order, key)
		}
		b := m.rec.Labrun
		if !slices.Contains(g.builds, b) {
			g.builds = append(g.builds, b)
		}
		g.froms[b] = append(g.froms[b], relPath(cwd, m.from))
	}
	var kept []string
	keptFrom := map[string][]string{}
	for _, m := range all {
		if inv := m.rec.Invocation; inv != nil {
			add("invocation "+inv.ID, fmt.Sprintf("of one labrun run (invocation %s)", inv.ID), m)
		}
		if sh := m.rec.Shard; sh != nil {
			add(fmt.Sprintf("split %d %d %s", sh.Count, sh.All, sh.Plan), fmt.Sprintf("of the shards of one split (%d shards, %d runs)", sh.Count, sh.All), m)
		}
		if b := m.rec.Labrun; b != "" {
			if !slices.Contains(kept, b) {
				kept = append(kept, b)
			}
			keptFrom[b] = append(keptFrom[b], relPath(cwd, m.from))
		}
	}
	var msgs []string
	for _, k := range order {
		g := groups[k]
		if len(g.builds) < 2 {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("the records %s name %d labrun builds: %s; one labrun run is made by one build (a record edited, or of another run standing in for one of it)%s", g.what, len(g.builds), buildWords(g.builds, g.froms), splitHint(g.what)))
	}
	if len(msgs) > 0 {
		return "", &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ")}
	}
	if len(kept) > 1 {
		warning = fmt.Sprintf("the records were made by %d labrun builds: %s; each is judged again by this labrun (%s), but what each run measured is what its build measured", len(kept), buildWords(kept, keptFrom), labrunBuild())
	}
	return warning, nil
}

// splitHint says what to do of shards run by two builds.
func splitHint(what string) string {
	if strings.HasPrefix(what, "of the shards") {
		return ": run every shard of a split with one labrun build"
	}
	return ""
}

// buildWords names each build and the records that name it: "(devel) abc… in r/a.json, r/b.json;
// (none: a record made before records kept it) in r/c.json".
func buildWords(builds []string, froms map[string][]string) string {
	var parts []string
	for _, b := range builds {
		name := b
		if name == "" {
			name = "(none: made before records kept it, or taken out)"
		}
		fs := slices.Compact(slices.Clone(froms[b]))
		if len(fs) > 3 {
			fs = append(fs[:3], fmt.Sprintf("and %d more", len(fs)-3))
		}
		parts = append(parts, fmt.Sprintf("%s in %s", name, strings.Join(fs, ", ")))
	}
	return strings.Join(parts, "; ")
}
