package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/interp"
)

// newStepsCmd lists the step kinds of the registry: `labrun steps`, or `labrun help steps`.
func newStepsCmd(p *process) *cobra.Command {
	list := strings.Join(interp.KindUsage(), "\n")
	return &cobra.Command{
		Use:   "steps",
		Short: "List the step kinds, one line each",
		Long: "The step kinds a scenario's steps can hold (exactly one per step). docs/language.md\n" +
			"describes each, and schema/<kind>.cue has every field with its doc comment.\n\n" + list,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(p.Stdout, list)
			return nil
		},
	}
}
