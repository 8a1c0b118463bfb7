package main

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
)

// selection is what picks scenarios out of the files given: --scenario (a name or a glob,
// repeatable), --tag (repeatable), --match and --skip (regular expressions on the names, as
// go test's -run and -skip). A pattern that selects nothing is an error, never a silent
// no-op: it is a typo, or the suite is not what the command line thinks.
type selection struct {
	names, tags []string
	match, skip string
}

func (s *selection) register(cmd *cobra.Command, verb string) {
	cmd.Flags().StringArrayVar(&s.names, "scenario", nil, verb+" only the scenario with this name, or those a glob matches (s*, kit_[ab]; repeatable)")
	cmd.Flags().StringArrayVar(&s.tags, "tag", nil, verb+" only scenarios with this tag (repeatable)")
	cmd.Flags().StringVar(&s.match, "match", "", verb+" only the scenarios whose names this regular expression matches (partly: ^…$ for the whole name)")
	cmd.Flags().StringVar(&s.skip, "skip", "", "leave out the scenarios whose names this regular expression matches")
}

func (s selection) empty() bool {
	return len(s.names) == 0 && len(s.tags) == 0 && s.match == "" && s.skip == ""
}

// selects is what the selection keeps, as a predicate on a scenario's name and tags (nil:
// every scenario), for the load's checks that depend on --target: they apply to the
// scenarios that will run (dsl.Options.Selected).
func (s selection) selects() func(name string, tags []string) bool {
	if s.empty() {
		return nil
	}
	var match, skip *regexp.Regexp
	if s.match != "" {
		match, _ = regexp.Compile(s.match) // a bad pattern is refused after the load
	}
	if s.skip != "" {
		skip, _ = regexp.Compile(s.skip)
	}
	return func(name string, tags []string) bool {
		if len(s.names) > 0 && !slices.ContainsFunc(s.names, func(n string) bool { return nameMatches(n, name) }) {
			return false
		}
		if len(s.tags) > 0 && !slices.ContainsFunc(s.tags, func(t string) bool { return slices.Contains(tags, t) }) {
			return false
		}
		return (match == nil || match.MatchString(name)) && (skip == nil || !skip.MatchString(name))
	}
}

// nameMatches reports whether a --scenario pattern selects name: a glob (path.Match) when it
// holds *, ? or [, the name itself otherwise.
func nameMatches(pattern, name string) bool {
	if strings.ContainsAny(pattern, "*?[") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	return pattern == name
}

func selectScenarios(all []*dsl.Scenario, sel selection) ([]*dsl.Scenario, error) {
	names, tags := sel.names, sel.tags
	for _, n := range names {
		if _, err := path.Match(n, ""); err != nil {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--scenario %q: %v", n, err)}
		}
	}
	regexps := map[string]*regexp.Regexp{}
	for _, fl := range [][2]string{{"--match", sel.match}, {"--skip", sel.skip}} {
		if fl[1] == "" {
			continue
		}
		re, err := regexp.Compile(fl[1])
		if err != nil {
			return nil, &exitError{exitInvalid, fmt.Sprintf("%s %q: %v", fl[0], fl[1], err)}
		}
		regexps[fl[0]] = re
	}
	var have []string
	for _, sc := range all {
		have = append(have, sc.Name)
	}
	named := func(sc *dsl.Scenario) bool {
		return len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return nameMatches(n, sc.Name) })
	}
	var out []*dsl.Scenario
	found := map[string]bool{}
	for _, sc := range all {
		if !named(sc) {
			continue
		}
		// Found by name even when its tags leave it out: the error then is about the tags.
		for _, n := range names {
			if nameMatches(n, sc.Name) {
				found[n] = true
			}
		}
		if len(tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(sc.Tags, t) }) {
			continue
		}
		out = append(out, sc)
	}
	for _, n := range names {
		if !found[n] {
			what := "no such scenario" + dsl.DidYouMean(n, have)
			if strings.ContainsAny(n, "*?[") {
				what = "the glob matches no scenario"
			}
			return nil, &exitError{exitInvalid, fmt.Sprintf("--scenario %q: %s; found: %s", n, what, strings.Join(have, ", "))}
		}
	}
	if len(tags) > 0 {
		tagged := map[string]bool{}
		for _, sc := range all {
			if !named(sc) {
				continue
			}
			for _, t := range sc.Tags {
				tagged[t] = true
			}
		}
		which := "the scenarios"
		if len(names) > 0 {
			which = "the selected scenarios"
		}
		if len(tagged) == 0 {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--tag %s: no scenario to run: %s have no tags", strings.Join(tags, " --tag "), which)}
		}
		// A tag that no scenario has selects nothing: beside other tags, the run would
		// silently leave out what it was meant to select.
		for _, t := range tags {
			if !tagged[t] {
				return nil, &exitError{exitInvalid, fmt.Sprintf("--tag %q: none of %s has this tag%s; their tags: %s", t, which, dsl.DidYouMean(t, sortedSet(tagged)), strings.Join(sortedSet(tagged), ", "))}
			}
		}
	}
	for _, fl := range []string{"--match", "--skip"} {
		re := regexps[fl]
		if re == nil {
			continue
		}
		var kept, names []string
		var next []*dsl.Scenario
		for _, sc := range out {
			names = append(names, sc.Name)
			if re.MatchString(sc.Name) == (fl == "--match") {
				next = append(next, sc)
				kept = append(kept, sc.Name)
			}
		}
		if len(kept) == len(names) && fl == "--skip" || len(kept) == 0 && fl == "--match" {
			return nil, &exitError{exitInvalid, fmt.Sprintf("%s %q matches none of the scenarios it chooses from: %s", fl, re, strings.Join(names, ", "))}
		}
		out = next
	}
	if len(out) == 0 {
		return nil, &exitError{exitInvalid, "no scenario to run"}
	}
	return out, nil
}
