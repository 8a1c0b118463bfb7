package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/interp"
)

func newMutateCmd(p *process) *cobra.Command {
	var output, file string
	cmd := &cobra.Command{
		Use:   "mutate RUN.json",
		Short: "Ask whether the expectations could have failed: judge perturbed copies of a recorded run",
		Long: `mutate reads the JSON record of a passing run and builds mutants: copies of it changed in
one way that matters to what the scenario's expectations read — for every stat an expectation
reads, its delta set to 0, doubled, +1, the counter reset, the stat absent; for every snapshot
value read, 0, doubled, +1, absent; for every load, all requests 200, all 503, none, latencies
×2 and ×0.5, and, where its ips are read, every connection to one address a load reached; for every logs step, no lines, another code, another flag, nothing captured; for
every exec, another exit code and empty stdout; for every get or config value, absent and
changed; for every sampled series, flat and shifted by one sample; for step times, each named
step 1s late. Each mutant is judged with the scenario's expectations as they are now (from the
file the run recorded, or --file), whose steps must be those the run ran (as replay's). A mutant that no expectation catches has SURVIVED: the
expectations cannot tell that outcome from the recorded one. So has one that fails an
expectation only because it changed one of two values, read by different steps, that the
expectation compares and the run recorded equal (delta.rq_5xx == fortio.code503, fortio's 503s
changed), when the run where both read the new value (built as a run could record it, the
ties its changes break followed too) passes every expectation; one that fails there kills it.
A mutant whose record contradicts
itself as replay would refuse it (fortio's sums broken, a load of requests: N with another
count) is impossible: no run records it, so it is listed but neither killed nor survived, and
not counted in the score.

Exit 0 when every mutant is killed or listed in the scenario's survivors (mutant name → the
reason it may survive), 1 otherwise (and when there is no mutant: nothing was shown), 2 when
the record does not pass or cannot be read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			rec, sc, _, err := p.recordAndScenario(args[0], file)
			if err != nil {
				return err
			}
			rep, err := interp.Mutate(rec, sc)
			if err != nil {
				return &exitError{exitInvalid, fmt.Sprintf("%s: %s", args[0], relError(p.Cwd, err.Error()))}
			}
			if machine(output) {
				p.printDoc(output, rep)
			} else {
				writeMutation(p, rep)
			}
			if rep.Unexplained > 0 || len(rep.Unused) > 0 || len(rep.Mutants) == rep.Impossible {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().StringVar(&file, "file", "", "the scenario file (default: the one the run recorded)")
	return cmd
}

// maxImpossibleShown bounds the reasons the table gives of a mutant no run records.
const maxImpossibleShown = 3

// writeMutation prints the mutants as a table, then the score.
func writeMutation(p *process, rep *interp.MutationReport) {
	width := p.wrapWidth()
	fmt.Fprintln(p.Stdout, wrapLines("mutants of "+rep.Scenario, width, 2))
	var rows [][2]string
	for _, m := range rep.Mutants {
		verdict := "SURVIVED"
		switch {
		case len(m.Impossible) > 0:
			// The first reasons say why; a counter's reset over a series gives one per
			// sample, a line of thousands of characters.
			why := m.Impossible
			if len(why) > maxImpossibleShown {
				why = append(slices.Clip(why[:maxImpossibleShown]), fmt.Sprintf("and %d more (-o json lists every one)", len(m.Impossible)-maxImpossibleShown))
			}
			verdict = "impossible, not counted: no run records it (" + strings.Join(why, "; ") + ")"
		case m.Killed:
			verdict = "killed by " + strings.Join(m.KilledBy, "; ")
		case m.Survives != "":
			verdict = "survives: " + m.Survives
		}
		if len(m.Contradicted) > 0 && !m.Killed {
			// Failed only as a record that contradicts itself: no wrong outcome was judged.
			verdict += " (failed only " + strings.Join(m.Contradicted, "; ") + ")"
			if m.Counterpart != "" {
				verdict += " (" + m.Counterpart + ": every expectation holds there)"
			}
		} else if m.Counterpart != "" && m.Killed {
			verdict += " (" + m.Counterpart + ", as a run with the mutant's outcome would)"
		}
		if len(m.NotJudged) > 0 {
			// Expectations that call now() keep their recorded outcome: they did not judge it.
			verdict += " (not judged by " + strings.Join(m.NotJudged, "; ") + ": an expectation that calls now() keeps the outcome the run recorded)"
		}
		rows = append(rows, [2]string{m.Name, verdict})
	}
	writeMutants(p.Stdout, rows, width)
	n := len(rep.Mutants) - rep.Impossible
	switch {
	case n == 0 && rep.Impossible > 0:
		fmt.Fprintln(p.Stdout, wrapLines(fmt.Sprintf("score: no mutant a run could record (%d impossible ones, not counted), so it cannot tell whether the expectations would fail on a wrong outcome", rep.Impossible), width, 2))
	case n == 0 && rep.Expectations == 0:
		fmt.Fprintln(p.Stdout, wrapLines("score: no mutants: the scenario has no expectations (mutate judges those; its assert and wait steps were judged during the run), so it cannot tell whether anything would fail on a wrong outcome", width, 2))
	case n == 0:
		fmt.Fprintln(p.Stdout, wrapLines("score: no mutants: the expectations read nothing labrun mutate changes (a load, a snapshot or delta, a result, a step's time or outcome), so it cannot tell whether they would fail on a wrong outcome", width, 2))
	default:
		score := fmt.Sprintf("score: %d of %d mutants killed (%.0f%%); %d survive with a reason, %d without", rep.Killed, n, 100*float64(rep.Killed)/float64(n), rep.Allowed, rep.Unexplained)
		if rep.Impossible > 0 {
			score += fmt.Sprintf("; %d impossible (no run records them), not counted", rep.Impossible)
		}
		fmt.Fprintln(p.Stdout, wrapLines(score, width, 2))
	}
	for _, k := range rep.Unused {
		fmt.Fprintln(p.Stdout, wrapLines(fmt.Sprintf("survivors names %q, which is no mutant of this run: it allows nothing", k), width, 2))
	}
}

// writeMutants writes the mutants and their verdicts: a table, its rows wrapped to width (0:
// not a terminal, whole); where the mutants' column would leave the verdicts less than half of
// width, each mutant on its line and its verdict indented under it. At 80 columns the table's
// rows went past the terminal's edge, which broke them mid-word.
func writeMutants(w io.Writer, rows [][2]string, width int) {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tVERDICT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	tw.Flush()
	head, _, _ := strings.Cut(table.String(), "\n")
	if width == 0 || strings.LastIndex(head, "VERDICT") <= width/2 {
		_, _ = io.WriteString(w, wrapTable(table.String(), "VERDICT", width))
		return
	}
	for _, r := range rows {
		fmt.Fprintln(w, wrapLines(r[0], width, 2))
		fmt.Fprintln(w, wrapLines("    "+r[1], width, 6))
	}
}
