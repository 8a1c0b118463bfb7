package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

func newDiffCmd(p *process) *cobra.Command {
	var output, plot string
	var tolerance float64
	cmd := &cobra.Command{
		Use:   "diff A.json B.json",
		Short: "Compare two recorded runs: every value that differs, and the verdicts that changed",
		Long: `diff reads two run records (of one scenario, or of two scenarios with the same step names,
e.g. STRICT_DNS against LOGICAL_DNS) and lists every recorded value that differs — counters,
gauges and histograms at each snapshot, deltas, sampled series, load results, exec and logs
results, captured values, each named step's start and duration — with the absolute and the
relative change, then the expectations whose verdict changed. --plot FILE.svg draws the counter
deltas and load figures that differ beyond the tolerance, A's bar above B's.

Exit 0 when nothing differs beyond --tolerance (a relative change, 0.1 for 10%; a value present
in one run only, a changed string and a changed verdict always count), 1 otherwise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return &exitError{exitInvalid, fmt.Sprintf("--output %q: expected text or json", output)}
			}
			if tolerance < 0 {
				return &exitError{exitInvalid, fmt.Sprintf("--tolerance %g: expected 0 or more (a relative change, 0.1 for 10%%)", tolerance)}
			}
			var recs [2]*interp.Record
			for i, a := range args {
				rec, err := report.Read(a)
				if err != nil {
					return &exitError{exitInvalid, err.Error()}
				}
				recs[i] = rec
			}
			d := interp.Diff(recs[0], recs[1], tolerance)
			if plot != "" {
				if !strings.HasSuffix(plot, ".svg") {
					return &exitError{exitInvalid, fmt.Sprintf("--plot %s: expected a file name ending in .svg", plot)}
				}
				svg, ok := report.DiffSVG(d)
				if !ok {
					fmt.Fprintf(p.Stderr, "labrun: --plot %s: no counter delta or load figure differs beyond the tolerance: nothing to draw\n", plot)
				} else if err := os.WriteFile(inCwd(p.Cwd, plot), []byte(svg), 0o644); err != nil {
					return &exitError{exitInvalid, fmt.Sprintf("--plot: %v", err)}
				}
			}
			if output == "json" {
				enc := json.NewEncoder(p.Stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				_ = enc.Encode(d)
			} else {
				writeDiff(p, args, d, tolerance)
			}
			if d.Beyond > 0 {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&plot, "plot", "", "also draw what differs (counter deltas, load figures) as an SVG bar chart into this file")
	cmd.Flags().Float64Var(&tolerance, "tolerance", 0, "relative change below which a numeric difference does not count (0.1 for 10%)")
	return cmd
}

func writeDiff(p *process, args []string, d *interp.RunDiff, tolerance float64) {
	fmt.Fprintf(p.Stdout, "A: %s (%s)\nB: %s (%s)\n", args[0], d.ScenarioA, args[1], d.ScenarioB)
	if len(d.Differences) == 0 && len(d.Verdicts) == 0 {
		fmt.Fprintln(p.Stdout, "no difference")
		return
	}
	tw := tabwriter.NewWriter(p.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VALUE\tA\tB\tCHANGE\t")
	for _, df := range d.Differences {
		change := ""
		if df.Abs != nil {
			change = fmt.Sprintf("%+.4g", *df.Abs)
			if df.Rel != nil {
				change += fmt.Sprintf(" (%+.1f%%)", 100**df.Rel)
			}
		}
		mark := ""
		if !df.Beyond {
			mark = "within tolerance"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", df.Path, show(df.A), show(df.B), change, mark)
	}
	tw.Flush()
	for _, v := range d.Verdicts {
		fmt.Fprintf(p.Stdout, "verdict changed: %s: %s → %s\n", v.Expr, or(string(v.A), "absent"), or(string(v.B), "absent"))
	}
	fmt.Fprintf(p.Stdout, "%d differences, %d beyond the tolerance of %g; %d verdicts changed\n", len(d.Differences), d.Beyond-len(d.Verdicts), tolerance, len(d.Verdicts))
}

// show writes a value for the table: a long one (an exec's stdout) is cut, so that it does not
// widen every row; -o json has it whole.
func show(v any) string {
	if v == nil {
		return "—"
	}
	s := strings.Join(strings.Fields(dsl.FormatValue(v)), " ")
	if r := []rune(s); len(r) > maxShown {
		return string(r[:maxShown-1]) + fmt.Sprintf("… (%d chars)", len(r))
	}
	return s
}

const maxShown = 40

// inCwd resolves a relative path against the process's working directory.
func inCwd(cwd, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(cwd, path)
}
