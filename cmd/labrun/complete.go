package main

import (
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
)

// registerCompletions teaches shell completion (labrun completion bash|zsh|fish|powershell)
// the values of labrun's flags: scenario names and tags from the paths already on the command
// line, the targets, the kubeconfig's contexts, the output formats.
func registerCompletions(p *process, root *cobra.Command) {
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return withPrefix(values, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	fromScenarios := func(pick func(*dsl.Scenario) []string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return scenarioValues(func(sc *dsl.Scenario, _ string) []string { return pick(sc) }, cobra.ShellCompDirectiveNoFileComp)
	}
	// --var and --sweep: the vars the scenarios declare, as name=; once the name is written,
	// its default (--var) or its declared sweep (--sweep) to edit.
	vars := func(sweep bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return scenarioValues(func(sc *dsl.Scenario, prefix string) []string {
			var out []string
			for _, name := range sortedKeys(sc.Vars) {
				switch {
				case !strings.HasPrefix(prefix, name+"="):
					out = append(out, name+"=")
				case sweep && len(sc.Sweep[name]) > 0:
					out = append(out, name+"="+strings.Join(sc.Sweep[name], ","))
				case !sweep:
					out = append(out, name+"="+dsl.Stringify(sc.Vars[name]))
				}
			}
			return out
		}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace)
	}
	contexts := func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		kubeconfig, _ := cmd.Flags().GetString("kubeconfig")
		names, err := kube.Contexts(kubeconfig)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
	}
	targets := []string{"local", "kube"}
	for name := range p.Targets {
		targets = append(targets, name)
	}
	sort.Strings(targets[2:])
	byFlag := map[string]func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective){
		"scenario":  fromScenarios(func(sc *dsl.Scenario) []string { return []string{sc.Name} }),
		"tag":       fromScenarios(func(sc *dsl.Scenario) []string { return sc.Tags }),
		"target":    fixed(targets...),
		"context":   contexts,
		"output":    fixed("text", "json", "yaml"),
		"var":       vars(false),
		"sweep":     vars(true),
		"envoy-via": fixed("exec", "port-forward"),
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for flag, fn := range byFlag {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, fn)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// scenarioValues completes a flag's value with what pick finds in the scenarios of the paths
// on the command line (the current directory when there are none), given what is written so
// far; a path that does not load completes nothing.
func scenarioValues(pick func(sc *dsl.Scenario, prefix string) []string, directive cobra.ShellCompDirective) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			args = []string{"."}
		}
		// Vars can change which scenarios load.
		opts := dsl.Options{Vars: map[string]string{}}
		if vars, err := cmd.Flags().GetStringArray("var"); err == nil {
			for _, v := range vars {
				if k, val, ok := strings.Cut(v, "="); ok {
					opts.Vars[k] = val
				}
			}
		}
		res, err := dsl.Load(args, opts)
		if err != nil && (res == nil || len(res.Scenarios) == 0) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		seen := map[string]bool{}
		for _, sc := range res.Scenarios {
			for _, v := range pick(sc, prefix) {
				seen[v] = true
			}
		}
		return withPrefix(sortedSet(seen), prefix), directive
	}
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
