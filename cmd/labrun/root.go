package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
)

// Main runs labrun with the process p and returns the exit code. Errors are printed here and
// nowhere else.
func Main(p *process) int {
	if len(p.Args) == 1 && p.Args[0] == backendHostArg {
		return serveBackendHost(p)
	}
	if p.IsTerminal && p.Getenv != nil && p.Getenv("TERM") == "dumb" {
		// A dumb terminal moves no cursor and shows no colour: the status block's redraws
		// and the colours would print as garbage. It gets a log's plain lines.
		p.IsTerminal = false
	}
	p.rawStdout = p.Stdout
	out := &watchedStream{name: "stdout", w: p.Stdout}
	errw := &watchedStream{name: "stderr", w: p.Stderr}
	p.watchedOut, p.watchedErr = out, errw
	p.Stdout, p.Stderr = p.secrets.wrap(out), p.secrets.wrap(errw)
	return p.streamsFailed(p.main())
}

// main is Main once the standard streams are watched: its exit code before a failed write
// to them is counted.
func (p *process) main() int {
	root := newRoot(p)
	var prof profiles
	prof.flags(root)
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return prof.start(p) }
	defer prof.stop(p)
	args := defaultToRun(root, p.Args)
	if len(args) > 0 && (args[0] == "run" || args[0] == "doc" || args[0] == "clean") {
		p.Signals() // keep catching interrupts: loading takes a moment
	} else if p.ReleaseSignals != nil {
		p.ReleaseSignals()
	}
	root.SetArgs(args)
	root.SetIn(p.Stdin)
	root.SetOut(p.Stdout)
	root.SetErr(p.Stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(p.Stderr, p.diagLines("labrun: "+ee.msg, 2))
		}
		return ee.code
	}
	// Cobra's own errors: unknown flags, wrong arguments.
	fmt.Fprintln(p.Stderr, p.diagLines("labrun: "+err.Error(), 2))
	fmt.Fprintln(p.Stderr, "Run 'labrun --help' for usage.")
	return exitInvalid
}

func newRoot(p *process) *cobra.Command {
	root := &cobra.Command{
		Use:   "labrun [run] PATH...",
		Short: "Run Istio/Envoy lab experiments written in CUE, and judge them",
		Long: `labrun runs experiments written in CUE on a timeline — apply, load, flip DNS, snapshot
Envoy stats, wait — and judges them with expressions such as
"delta.upstream_rq_pending_overflow == fortio.code503".

A bare path is short for "labrun run PATH".

Exit codes: 0 every expectation held; 1 an expectation failed; 2 invalid spec or usage;
3 infrastructure error; 4 the run left behind what its cleanup could not remove (labrun clean
lists it); 130 interrupted (SIGINT, SIGTERM, SIGHUP).`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(flagValueError)
	// --version: cobra adds the flag when Version is set; the template prints the line that
	// labrun version prints, computed only when asked.
	root.Version = "-"
	cobra.AddTemplateFunc("labrunVersion", version)
	root.SetVersionTemplate("{{labrunVersion}}\n")
	// Defined here so that cobra adds no -v shorthand (often read as verbose).
	root.Flags().Bool("version", false, "print labrun's version and VCS revision (as labrun version does)")
	root.AddCommand(newRunCmd(p), newMergeCmd(p), newJobCmd(p), newCollectCmd(p), newVetCmd(p), newPlanCmd(p), newReplayCmd(p), newDocCmd(p), newCleanCmd(p), newVersionCmd(p), newInitCmd(p), newStepsCmd(p), newMutateCmd(p), newDiffCmd(p), newLSPCmd(p))
	registerCompletions(p, root)
	return root
}

// flagValueError says what a flag's value was expected to be (--count abc: expected an
// integer), where pflag's message ends with Go's parse error (strconv.ParseInt: parsing "abc":
// invalid syntax; time: missing unit in duration "5"). Every other flag error stays as it is.
func flagValueError(c *cobra.Command, err error) error {
	m := flagValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	names := strings.Fields(strings.ReplaceAll(m[2], ",", " ")) // "-n, --namespace" names a shorthand too
	name := strings.TrimLeft(names[len(names)-1], "-")
	f := c.Flags().Lookup(name)
	if f == nil {
		return err
	}
	want, ok := map[string]string{
		"int":      "an integer",
		"duration": "a duration with its unit, such as 10s or 500ms",
		"float64":  "a number",
		"bool":     "true or false",
	}[f.Value.Type()]
	if !ok {
		return err
	}
	return fmt.Errorf("--%s %s: expected %s", name, m[1], want)
}

var flagValueRE = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: `)

// defaultToRun turns "labrun x.cue" into "labrun run x.cue".
func defaultToRun(root *cobra.Command, args []string) []string {
	if len(args) == 0 {
		return args
	}
	first := args[0]
	if strings.HasPrefix(first, "-") {
		return args
	}
	for _, c := range root.Commands() {
		if c.Name() == first || c.HasAlias(first) || first == "help" || first == "completion" {
			return args
		}
	}
	if strings.HasSuffix(first, ".cue") || dsl.IsMarkdown(first) || isDir(first) {
		return append([]string{"run"}, args...)
	}
	return args
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func newVersionCmd(p *process) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print labrun's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(p.Stdout, version())
			return nil
		},
	}
}
