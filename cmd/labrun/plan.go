package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/suite"
)

func newPlanCmd(p *process) *cobra.Command {
	var f loadFlags
	var mf matrixFlags
	var sel selection
	var objects bool
	var parallel int
	var tf targetFlags
	var server bool
	cmd := &cobra.Command{
		Use:   "plan PATH...",
		Short: "Show each scenario's timeline without running it",
		Long: `plan prints, for each scenario, every step with its planned start (from the start of its
phase, and from the start of its block), its timeout, what it waits on, background spans and
sampling intervals, and the cleanup. A scenario that sweeps (its own sweep:, --sweep) or
repeats (--count) also lists its runs: each combination of the swept values and each round,
with its id, its vars and its planned span (the timeline shown is the first run's). "+5s" is exact; "≥5s" is a lower bound because a step of
unknown duration (an apply, a load of N requests) comes before it. --objects also prints
the objects each apply step applies, as YAML, with ${...} left as written (filled when the
step runs). --server judges an Istio kind's fields by the cluster's CRDs, as vet --server and
run do (a dry run of every object the scenarios apply), so that a field of an Istio newer
than the one labrun knows is planned.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			target := tf.target
			if server {
				// As vet --server: the cluster's CRDs judge an Istio kind's fields (it may
				// run a newer Istio than the one labrun knows), by a dry run below.
				opts.Target, opts.IstioByCluster = "kube", true
			}
			w, err := p.expand(args, opts, expansion{sel: sel, matrix: mf, output: "text", target: target})
			if err != nil {
				return err
			}
			if server {
				errs, err := p.vetServer(serverCombinations(w), &tf)
				if err != nil {
					return err
				}
				if len(errs) > 0 {
					return p.reportVet(f.output, w.res, errs)
				}
			}
			var plans []*dsl.Plan
			for _, m := range w.matrices {
				var units []*dsl.Unit
				for _, u := range w.units {
					if u.Matrix == m {
						units = append(units, u)
					}
				}
				sc := units[0].Scenario
				pl := dsl.PlanOf(sc)
				if m.Summarized() {
					pl.Matrix, pl.Units = m, dsl.PlanUnits(units)
				}
				if objects {
					pl.Objects = dsl.RenderedObjects(sc)
					for i := range pl.Objects {
						pl.Objects[i].Pos = pl.Objects[i].Pos.Rel(p.Cwd)
					}
				}
				pl.Pos = pl.Pos.Rel(p.Cwd)
				for i := range pl.Entries {
					pl.Entries[i].Pos = pl.Entries[i].Pos.Rel(p.Cwd)
				}
				plans = append(plans, pl)
			}
			if parallel < 0 {
				return &exitError{exitInvalid, fmt.Sprintf("--parallel %d: expected 1 or more", parallel)}
			}
			var slots []suite.Slot
			var jobs []suite.Job
			var leaks []suite.Leak
			if parallel > 0 {
				jobs, leaks = jobsOf(w, target)
				slots = suite.Schedule(jobs, parallel)
				for i := range leaks {
					leaks[i].Pos = leaks[i].Pos.Rel(p.Cwd)
				}
			}
			if machine(f.output) {
				if parallel == 0 {
					return (&docWriter{w: p.Stdout, output: f.output}).write(plans)
				}
				type run struct {
					ID        string           `json:"id"`
					Resources []suite.Resource `json:"resources,omitempty"`
					NotSeen   []string         `json:"notSeen,omitempty"`
					suite.Slot
				}
				runs := []run{}
				for i, s := range slots {
					runs = append(runs, run{ID: w.units[i].ID, Resources: jobs[i].Resources, NotSeen: jobs[i].NotSeen, Slot: s})
				}
				if leaks == nil {
					leaks = []suite.Leak{}
				}
				return (&docWriter{w: p.Stdout, output: f.output}).write(map[string]any{"plans": plans, "schedule": map[string]any{"parallel": parallel, "runs": runs, "isolation": leaks}})
			}
			if w.shard != nil {
				writeShardLine(p.Stdout, w)
				tw := tabwriter.NewWriter(p.Stdout, 0, 0, 2, ' ', 0)
				if len(w.units) > 0 {
					fmt.Fprintln(tw, "  RUN\tPLANNED")
				}
				for _, u := range w.units {
					fmt.Fprintf(tw, "  %s\t%s\n", u.ID, u.Planned)
				}
				tw.Flush()
				if len(plans) > 0 {
					fmt.Fprintln(p.Stdout)
				}
			}
			for i, pl := range plans {
				if i > 0 {
					fmt.Fprintln(p.Stdout)
				}
				writePlan(p.Stdout, pl, p.wrapWidth())
			}
			if parallel > 0 {
				fmt.Fprintln(p.Stdout)
				writeSchedule(p.Stdout, p.Cwd, w.units, jobs, parallel, slots)
				for _, l := range leaks {
					fmt.Fprintln(p.Stdout, l.String())
				}
			}
			return nil
		},
	}
	f.register(cmd)
	mf.register(cmd, "plan")
	sel.register(cmd, "plan")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "also print the schedule of run --parallel N: each run's lane, planned start and what it waits for, and which objects leak mesh-wide")
	cmd.Flags().Var(targetValue{p, &tf.target}, "target", "with --parallel: the target the runs would run on (default: each scenario's)")
	cmd.Flags().BoolVar(&server, "server", false, "judge an Istio kind's fields by the cluster's CRDs (kube target), by a dry run of every object the scenarios apply, as vet --server does")
	tf.registerCluster(cmd)
	cmd.Flags().BoolVar(&objects, "objects", false, "also print the objects each apply step applies (YAML, ${...} as written)")
	return cmd
}

// writePlan prints a plan as a table, its lines wrapped at spaces to width (0: not wrapped;
// a table's row goes on under its last column).
func writePlan(w io.Writer, pl *dsl.Plan, width int) {
	fmt.Fprintln(w, wrapLines(fmt.Sprintf("scenario %s (%s, target %s)", pl.Scenario, pl.Pos, pl.Target), width, 2))
	if pl.Doc != "" {
		fmt.Fprintln(w, wrapLines("  "+pl.Doc, width, 2))
	}
	swept := map[string]dsl.SweepVar{}
	if pl.Matrix != nil {
		for _, sw := range pl.Matrix.Sweep {
			swept[sw.Name] = sw
		}
	}
	for _, v := range pl.Vars {
		if sw, ok := swept[v.Name]; ok {
			fmt.Fprintln(w, wrapLines(fmt.Sprintf("  var %s swept: %s (%s; the timeline below is %s=%s's)", v.Name, strings.Join(sw.Values, ", "), sw.Source(), v.Name, sw.Values[0]), width, 4))
			continue
		}
		fmt.Fprintln(w, wrapLines(fmt.Sprintf("  var %s = %s (%s)", v.Name, dsl.FormatValue(v.Value), v.From), width, 4))
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSTART\tIN BLOCK\tSTEP\tKIND\tTIMEOUT\tNOTES")
	for _, e := range pl.Entries {
		label := strings.Repeat("  ", e.Depth) + e.Path
		if e.Name != "" {
			label = strings.Repeat("  ", e.Depth) + e.Name
		}
		timeout := "-"
		if e.Timeout > 0 {
			timeout = fmtTimeout(e.Timeout)
			if e.TimeoutDefault {
				timeout += " (default)"
			}
		}
		var notes []string
		if e.Cluster != "" {
			notes = append(notes, "cluster "+e.Cluster)
		}
		if e.Summary != "" {
			notes = append(notes, dsl.Truncate(e.Summary, 91))
		}
		if e.Duration != nil {
			notes = append(notes, "lasts "+durString(*e.Duration))
		}
		if e.Every > 0 {
			notes = append(notes, fmt.Sprintf("every %s while %s runs", e.Every, e.While))
		}
		if e.Background {
			until := "end of " + string(e.Phase)
			if e.JoinedBy != "" {
				until = "await " + e.JoinedBy
			}
			notes = append(notes, "background until "+until)
		}
		if e.Kind == "await" && e.Summary == "" {
			notes = append(notes, "waits for "+strings.Join(e.WaitsOn, ", "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Phase, e.Start, e.InBlock, label, e.Kind, timeout, strings.Join(notes, "; "))
	}
	tw.Flush()
	_, _ = io.WriteString(w, wrapTable(table.String(), "NOTES", width))
	fmt.Fprintln(w, wrapLines("  then: "+pl.AutoCleanup, width, 4))
	if pl.Matrix != nil {
		writeUnits(w, pl, width)
	}
	for _, o := range pl.Objects {
		fmt.Fprintf(w, "\n--- %s (%s, %s)\n%s", o.Step, o.Pos, o.Object, o.YAML)
	}
}

// writeUnits lists the runs of a matrix: each with its id, its vars and its planned span.
func writeUnits(w io.Writer, pl *dsl.Plan, width int) {
	fmt.Fprintln(w, wrapLines("  runs: "+matrixSummary(pl.Matrix), width, 4))
	table := unitsTable(pl, true)
	if head, _, _ := strings.Cut(table, "\n"); width > 0 && visibleLen(strings.TrimRight(head, " ")) > width {
		// Too wide for the terminal: PLANNED went on alone on the next line (with --count 2's
		// ROUND column). The VARS column goes; each run's ID names its vars too.
		table = unitsTable(pl, false)
	}
	_, _ = io.WriteString(w, wrapTable(table, "PLANNED", width))
}

// unitsTable is the table of the matrix's runs: each with its id, its vars (withVars), its
// round and its planned span.
func unitsTable(pl *dsl.Plan, withVars bool) string {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	// A matrix of one run per combination has no column of rounds: its "1 of 1" on every row
	// said nothing, and at 80 columns a sweep's rows filled the line and PLANNED went on
	// alone on the next.
	head := "  RUN\tID\t"
	if withVars {
		head += "VARS\t"
	}
	if pl.Matrix.Count > 1 {
		head += "ROUND\t"
	}
	fmt.Fprintln(tw, head+"PLANNED")
	for i, u := range pl.Units {
		row := fmt.Sprintf("  %d\t%s\t", i+1, u.ID)
		if withVars {
			row += or(strings.ReplaceAll(dsl.ComboKey(u.Vars), ",", " "), "-") + "\t"
		}
		if pl.Matrix.Count > 1 {
			row += fmt.Sprintf("%d of %d\t", u.Round, pl.Matrix.Count)
		}
		fmt.Fprintf(tw, "%s%s\n", row, u.Planned)
	}
	tw.Flush()
	return table.String()
}

// wrapTable wraps each line of a table (tabwriter's output, its first line the header) at
// spaces to width, a row going on under the column headed last (NOTES): at 80 columns the
// terminal broke plan's rows mid-word ("backe" / "nd b"). Not wrapped when width is 0.
func wrapTable(table, last string, width int) string {
	if width == 0 {
		return table
	}
	head, _, _ := strings.Cut(table, "\n")
	column := strings.LastIndex(head, last)
	wrap := func(l string, indent int) (string, bool) {
		// The padding of the columns before a break is left out: not to the terminal's edge.
		w := padBeforeBreak.ReplaceAllString(wrapLines(l, width, indent), "\n")
		return w, !slices.ContainsFunc(strings.Split(w, "\n"), func(s string) bool { return visibleLen(s) > width })
	}
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		w, fits := wrap(l, column)
		if column < 0 || !fits {
			// A word the column's room cannot hold (a URL): under the row, indented.
			w, _ = wrap(l, 6)
		}
		lines[i] = w
	}
	return strings.Join(lines, "\n") + "\n"
}

var padBeforeBreak = regexp.MustCompile(` +\n`)

func durString(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// fmtTimeout prints a timeout as written: 5m, 30s, 1m30s, 200ms.
func fmtTimeout(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
