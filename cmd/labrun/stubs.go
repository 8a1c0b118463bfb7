package main

import "github.com/spf13/cobra"

func newDocCmd(p *process) *cobra.Command {
	return &cobra.Command{Use: "doc FILE.md...", Short: "Run the specs embedded in Markdown documents", RunE: func(*cobra.Command, []string) error {
		return &exitError{exitInvalid, "doc is not implemented yet"}
	}}
}
