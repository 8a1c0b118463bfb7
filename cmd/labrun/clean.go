package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/schema"
)

type cleanFlags struct {
	kubeconfig string
	// contexts are the clusters to clean, one after the other (none: the current context).
	contexts   []string
	scenario   string
	namespaces []string
	yes        bool
	allHosts   bool
	timeout    time.Duration
}

func newCleanCmd(p *process) *cobra.Command {
	var f cleanFlags
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "List (and with --yes delete) what dead runs left on the cluster",
		Long: `clean finds every object on the cluster that a run of labrun created (they carry the labels
labrun.dev/run and labrun.dev/scenario, and an annotation labrun.dev/owner naming the host and
pid of the labrun that created them) and lists them by run, saying whether that run is still
alive. With --yes it deletes the objects of dead runs (namespaces last) and waits until they
are gone. Objects of a run that is still alive (its pid runs on this host, with the same start
time) are never deleted; objects of runs on other hosts only with --all-hosts.

Exit codes: 0 listed (or deleted) everything it could; 3 the cluster could not be read, a kind
(or an API group) could not be listed, or an object could not be deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return p.clean(&f) },
	}
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	cmd.Flags().StringArrayVar(&f.contexts, "context", nil, "the kubeconfig context (default: the current one); repeat it to clean several clusters, e.g. each cluster of a multi-cluster scenario")
	cmd.Flags().StringVar(&f.scenario, "scenario", "", "only what runs of this scenario left")
	cmd.Flags().StringArrayVarP(&f.namespaces, "namespace", "n", nil, "look for namespaced objects only in this namespace (repeatable; default: all namespaces)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "delete what dead runs left (without it: only list)")
	cmd.Flags().BoolVar(&f.allHosts, "all-hosts", false, "also delete what runs on other hosts left (labrun cannot tell whether they are alive)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 5*time.Minute, "bound on listing, deleting and waiting until the objects are gone")
	return cmd
}

func (p *process) clean(f *cleanFlags) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	runCtx, _, stop := p.runContexts()
	defer stop()
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	go func() {
		select {
		case <-runCtx.Done():
			cancelRun()
		case <-ctx.Done():
		}
	}()
	contexts := f.contexts
	if len(contexts) == 0 {
		contexts = []string{""}
	}
	var errs []error
	for _, kctx := range contexts {
		err := p.cleanOne(ctx, runCtx, f, kctx)
		var ee *exitError
		if errors.As(err, &ee) && ee.code == exitInterrupted {
			return err
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	if len(errs) > 1 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return &exitError{exitInfra, strings.Join(msgs, "; ")}
	}
	return nil
}

// cleanOne lists (and with --yes deletes) what dead runs left on the cluster of one context.
func (p *process) cleanOne(ctx, runCtx context.Context, f *cleanFlags, kctx string) error {
	c, err := kube.NewCleaner(ctx, kube.Options{Kubeconfig: f.kubeconfig, Context: kctx, Getenv: p.Getenv})
	if err != nil {
		return &exitError{exitInfra, err.Error()}
	}
	items, warnings := c.List(ctx, f.scenario, f.namespaces)
	for _, w := range warnings {
		fmt.Fprintf(p.Stderr, "labrun: clean: warning: %v\n", w)
	}
	if interrupted(runCtx) {
		return &exitError{exitInterrupted, "clean: interrupted"}
	}
	runs := groupRuns(items)
	fmt.Fprintf(p.Stdout, "%s: %d object(s) of %d run(s)\n", c.Describe, len(items), len(runs))
	var doomed []kube.Leftover
	for _, r := range runs {
		verdict := r.state.String()
		del := r.state == runDead || (r.state == runOtherHost && f.allHosts)
		if del && f.yes {
			verdict += ": deleting"
			doomed = append(doomed, r.items...)
		}
		fmt.Fprintf(p.Stdout, "run %s (scenario %s, %s): %s\n", r.id, r.scenario, r.owner, verdict)
		for _, l := range r.items {
			mark := ""
			if l.Terminating {
				mark = " (being deleted)"
			}
			fmt.Fprintf(p.Stdout, "  %s%s\n", l, mark)
		}
	}
	// What could not be listed was not looked for: the cluster may still hold what dead runs
	// left there. It exited 0 after a warning, and a CI read the cluster as clean.
	var unlisted error
	if len(warnings) > 0 {
		unlisted = &exitError{exitInfra, fmt.Sprintf("clean: %s: %d kind(s) or API group(s) could not be listed (the warning(s) above): what dead runs left there was not looked for, and the cluster may not be clean", c.Describe, len(warnings))}
	}
	if !f.yes {
		if len(items) > 0 {
			fmt.Fprintln(p.Stdout, "nothing deleted: run `labrun clean --yes` to delete what dead runs left")
		}
		return unlisted
	}
	if len(doomed) == 0 {
		return unlisted
	}
	if err := c.Delete(ctx, doomed, true); err != nil && !errors.Is(err, schema.ErrAlreadyGone) {
		if interrupted(runCtx) {
			return &exitError{exitInterrupted, "clean: interrupted: " + err.Error()}
		}
		return &exitError{exitInfra, "clean: " + err.Error()}
	}
	fmt.Fprintf(p.Stdout, "deleted %d object(s)\n", len(doomed))
	return unlisted
}

// runState says whether the run that created some objects is still alive.
type runState int

const (
	runDead      runState = iota // its labrun is gone: what it left can go
	runAlive                     // its labrun runs on this host: hands off
	runOtherHost                 // it ran on another host: labrun cannot tell
)

func (s runState) String() string {
	return [...]string{"dead", "still alive (not deleted)", "on another host (not deleted without --all-hosts)"}[s]
}

type runGroup struct {
	id, scenario, owner string
	state               runState
	items               []kube.Leftover
}

// groupRuns groups leftovers by run and judges each run alive or dead.
func groupRuns(items []kube.Leftover) []runGroup {
	byRun := map[string]*runGroup{}
	for _, l := range items {
		g := byRun[l.RunID]
		if g == nil {
			g = &runGroup{id: l.RunID, scenario: l.Scenario, owner: ownerText(l), state: ownerState(l)}
			byRun[l.RunID] = g
		}
		g.items = append(g.items, l)
	}
	var out []runGroup
	for _, id := range slices.Sorted(maps.Keys(byRun)) {
		out = append(out, *byRun[id])
	}
	return out
}

func ownerText(l kube.Leftover) string {
	if l.PID == 0 {
		return "no owner annotation"
	}
	return fmt.Sprintf("pid %d on %s", l.PID, l.Host)
}

// ownerState judges the run that created l: alive when its pid runs on this host with the
// start time it recorded.
func ownerState(l kube.Leftover) runState {
	if l.PID == 0 {
		return runDead // marked by labrun, owner unknown: nothing can still be using it
	}
	host, _ := os.Hostname()
	if l.Host != host {
		return runOtherHost
	}
	start, ok := procStart(l.PID)
	if !ok {
		return runDead
	}
	if l.PIDStart != 0 && start != 0 && start != l.PIDStart {
		return runDead // the pid was recycled
	}
	return runAlive
}

// leftoversBeforeRun looks for objects that earlier runs of sc left on the cluster: it warns
// about them, or with cleanFirst deletes those of dead runs and waits until they are gone.
// It never fails the run: a check that cannot be done is a warning.
func (p *process) leftoversBeforeRun(ctx context.Context, name string, opts kube.Options, cleanFirst bool) {
	w := p.Stderr
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := kube.NewCleaner(ctx, opts)
	if err != nil {
		return // the target's own creation says why
	}
	// In every namespace, as `labrun clean --scenario NAME` lists them: what a dead run left
	// may lie outside the scenario's namespaces of today. A suite looks once for all its runs.
	var items []kube.Leftover
	var warnings []error
	if p.leftoverScan != nil {
		items, warnings = p.leftoverScan.of(ctx, c, name)
	} else {
		lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
		items, warnings = c.List(lctx, name, nil)
		lcancel()
	}
	if ctx.Err() != nil {
		return // interrupted: the run stops anyway
	}
	if len(warnings) > 0 {
		fmt.Fprintf(w, "labrun: %s: warning: leftovers of earlier runs not fully checked (%d resource(s) could not be listed, e.g. %v)\n", name, len(warnings), warnings[0])
	}
	// Not leftovers: what is already being deleted (an ephemeral namespace, whose deletion
	// its run did not wait for), and what the other runs of this very labrun hold (a
	// parallel suite, --count).
	host, _ := os.Hostname()
	items = slices.DeleteFunc(items, func(l kube.Leftover) bool {
		return l.Terminating || l.PID == os.Getpid() && l.Host == host
	})
	var dead []kube.Leftover
	var deadRuns, alive []string
	for _, r := range groupRuns(items) {
		switch r.state {
		case runDead:
			dead = append(dead, r.items...)
			deadRuns = append(deadRuns, r.id)
		case runAlive:
			alive = append(alive, fmt.Sprintf("%s (%s)", r.id, r.owner))
		}
	}
	if len(alive) > 0 {
		fmt.Fprintf(w, "labrun: %s: warning: another run of this scenario is still alive: %s\n", name, strings.Join(alive, ", "))
	}
	if len(dead) == 0 {
		return
	}
	if !cleanFirst {
		// The count is what `labrun clean --scenario NAME` lists, every run's; then those of
		// dead runs, which --yes deletes.
		fmt.Fprintf(w, "labrun: %s: warning: `labrun clean --scenario %s` lists %d object(s) that earlier runs of this scenario left on the cluster (e.g. %s); %d of them, of %d dead run(s), go with `labrun clean --yes --scenario %s` or `run --clean-first`\n",
			name, name, len(items), dead[0], len(dead), len(deadRuns), name)
		return
	}
	if err := c.Delete(ctx, dead, true); err != nil && !errors.Is(err, schema.ErrAlreadyGone) {
		fmt.Fprintf(w, "labrun: %s: warning: --clean-first: %v\n", name, err)
		return
	}
	fmt.Fprintf(w, "labrun: %s: --clean-first: deleted %d object(s) left by %d dead run(s)\n", name, len(dead), len(deadRuns))
}

// leftoverScan is one look for leftovers that every run of a suite shares: a suite of N
// scenarios on one cluster lists the cluster's resources once, not N times (each list is a
// request per resource the API server serves). It is made before the first run, so it holds
// what earlier labruns left, not what this one's runs make.
type leftoverScan struct {
	once     sync.Once
	items    []kube.Leftover
	warnings []error
}

// of returns what the scan found of scenario name, in every namespace, as Cleaner.List does.
func (s *leftoverScan) of(ctx context.Context, c *kube.Cleaner, name string) ([]kube.Leftover, []error) {
	s.once.Do(func() {
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s.items, s.warnings = c.List(lctx, "", nil)
	})
	var out []kube.Leftover
	for _, l := range s.items {
		if l.Scenario == name {
			out = append(out, l)
		}
	}
	return out, s.warnings
}
