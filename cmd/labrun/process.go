package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"golang.org/x/term"
	"k8s.io/klog/v2"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/earlysignal"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// process holds every process global the CLI uses: standard streams, environment, working
// directory and signals. Nothing below the CLI reads them directly; tests build their own.
type process struct {
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Cwd    string
	// IsTerminal reports whether stdout is a terminal (live progress instead of plain lines).
	IsTerminal bool
	// shownOnTerminal: stdout is a buffer that reaches the terminal when the run ends (a run of
	// --parallel N > 1): its lines are wrapped to TermWidth, but no status block is drawn.
	shownOnTerminal bool
	// TermWidth returns the terminal's width in columns (0: unknown); the status block is cut
	// to it, since a wrapped line would break the redraw.
	TermWidth func() int
	// StderrWidth returns the width in columns of the terminal stderr is (0: not a terminal,
	// or unknown): the lints' warnings and the errors are wrapped to it (diagLines).
	StderrWidth func() int
	// Signals delivers SIGINT and SIGTERM; Stop releases them.
	Signals func() (<-chan os.Signal, func())
	// Exit ends the process (nil: os.Exit); tests set it to see an exit that does not wait
	// for the run.
	Exit func(code int)
	// ReleaseSignals gives SIGINT and SIGTERM their default action back, for the commands that
	// do not handle them (nil: nothing to release).
	ReleaseSignals func()
	// secrets hides the running scenario's secret vars in Stdout and Stderr (Main wraps them).
	secrets consoleSecrets
	// watchedOut and watchedErr are stdout and stderr as Main watches them (nil before
	// Main): a write that failed makes the exit code at least 3 (streamsFailed).
	watchedOut, watchedErr *watchedStream
	// rawStdout is Stdout before Main wrapped it (nil: Stdout is not wrapped): labrun lsp
	// speaks a protocol there, whose messages the hiding must not rewrite.
	rawStdout io.Writer
	// phases counts the runs under way and the reports being written (shared with the
	// processes of a --parallel suite's runs; set by runContexts): an interrupt that comes
	// when every run is over and a report is being written lets it finish (and labrun exits
	// 130) rather than stopping steps that are over.
	phases *runPhases
	// afterRun, when a test sets it, is called once a run has returned, before its report is
	// written: the test interrupts there.
	afterRun func()
	// loadsPaced is set while a command holds the collector's pacing for its loads
	// (paceLoads): loadTo then leaves it alone.
	loadsPaced bool
	// reportGC paces the collector while reports are written (reportPacing).
	reportGC reportPacer
	// live is the progress on screen now, if any: a notice printed meanwhile clears its status
	// block first, so that the two do not share a line.
	live liveProgress
	// junitWritten is set once the command has written (or tried to write) its --junit file:
	// a command that ends before it did writes one saying it was refused (junitOfRefusal).
	junitWritten bool
	// abandonJUnit is the --junit file of the run under way until the run has written it
	// (nil: none): an interrupt that ends labrun at once writes there that it did
	// (junitOfAbandon), lest an older file be read as this run's results.
	abandonJUnit atomic.Pointer[string]
	// leftoverScan, set for a suite of runs, is the look for what dead runs left that its
	// runs share (clean.go).
	leftoverScan *leftoverScan
	// sources remembers the hash of each scenario file's source (records' source).
	sources *sourceHashes
	// unverified, set by merge, says of each record it judged with fewer checks than a
	// record with its artifacts of labrun's own version gets, which ones (recordUnverified):
	// its summary line says so, as replay's verdict line does.
	unverified map[*interp.Record][]string
	// besideSummaries are the summaries merge found in the folders it read records from; they
	// are held to those records once each record has been (summariesBeside).
	besideSummaries []string
	// Targets are extra targets by name, besides local and kube (tests add fakes).
	Targets map[string]func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error)
}

// fakeTarget, set only in binaries built with the labrun_fakes tag, adds the fake target.
var fakeTarget = func(*process) {}

func newProcess() *process {
	cwd, _ := os.Getwd()
	p := &process{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Cwd:        cwd,
		sources:    &sourceHashes{},
		IsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		TermWidth: func() int {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0
			}
			return w
		},
		StderrWidth: func() int {
			fd := int(os.Stderr.Fd())
			if !term.IsTerminal(fd) {
				return 0
			}
			w, _, err := term.GetSize(fd)
			if err != nil {
				return 0
			}
			return w
		},
		// Caught since the process started (see earlysignal): the commands that run scenarios
		// take them, so an interrupt during start-up or loading is not lost, and every other
		// command releases them.
		Signals:        earlysignal.Take,
		ReleaseSignals: earlysignal.Release,
	}
	fakeTarget(p)
	quietLibraries()
	return p
}

// quietLibraries silences client-go's klog, which prints its own lines to stderr (e.g.
// "Copying stderr failed" when an exec is cancelled on purpose, or discovery's "Couldn't get
// current server API group list" on a wrong token); labrun reports errors itself. Errors
// reach stderr whatever klog's output is (its stderr threshold), unless a logger replaces
// klog's own: every klog call then goes to that logger, which drops it.
func quietLibraries() {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
}

// reportGCPercent is the collector's target while a run's reports are written: what writing
// them allocates is garbage at once, and the run's heap is at its largest then (a
// 10,000-step run: 66 MB live while writing, 118 MB of heap at the default 100 %).
const reportGCPercent = 50

// reportPacer sets the collector's target to reportGCPercent while at least one report is
// being written (runs of a suite may write theirs at once), and puts the previous one back
// after the last.
type reportPacer struct {
	mu      sync.Mutex
	writers int
	prev    int
}

// reportPacing paces the collector for a report being written, unless the user set GOGC;
// the returned func ends it.
func (p *process) reportPacing() (done func()) {
	if p.Getenv("GOGC") != "" {
		return func() {}
	}
	r := &p.reportGC
	r.mu.Lock()
	if r.writers == 0 {
		r.prev = debug.SetGCPercent(reportGCPercent)
	}
	r.writers++
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.writers--; r.writers == 0 {
			debug.SetGCPercent(r.prev)
		}
	}
}
