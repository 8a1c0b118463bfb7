package main

import "github.com/spf13/cobra"

func newReplayCmd(p *process) *cobra.Command {
	return &cobra.Command{Use: "replay RUN.json", Short: "Re-judge a recorded run", RunE: func(*cobra.Command, []string) error {
		return &exitError{exitInvalid, "replay is not implemented yet"}
	}}
}

func newDocCmd(p *process) *cobra.Command {
	return &cobra.Command{Use: "doc FILE.md...", Short: "Run the specs embedded in Markdown documents", RunE: func(*cobra.Command, []string) error {
		return &exitError{exitInvalid, "doc is not implemented yet"}
	}}
}
