package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"labrun.dev/labrun/schema"
)

// waitDelay bounds how long a command's output is awaited after it exited (or was killed):
// a grandchild that keeps stdout open must not hang the step.
const waitDelay = 2 * time.Second

// executor runs exec steps on this machine: argv without a shell, in the scenario's
// directory, stdin from the step. A non-zero exit is a result; the error is for a command
// that could not start or was cancelled. A command killed by a signal exits 128+signal, as
// shells report it. On cancellation everything it started is killed (its keeper's tree).
type executor struct {
	opts   *Options
	launch *launcher
}

func (e *executor) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	var res schema.ExecResult
	if req.Pod != "" || req.Selector != "" || req.Container != "" || req.Namespace != "" {
		return res, errors.New("exec: pod, selector, container and namespace need the kube target; the local target runs argv on this machine")
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return res, errors.New("exec: argv is empty")
	}
	var capture *regexp.Regexp
	if req.Capture != "" {
		var err error
		if capture, err = regexp.Compile(req.Capture); err != nil {
			return res, fmt.Errorf("exec: capture: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, req.Argv[0], req.Argv[1:]...)
	cmd.Dir = e.opts.Dir
	cmd.Env = e.launch.env(commandEnv(e.opts, req.Env))
	cmd.Stdin = strings.NewReader(req.Stdin)
	// The step's writers when it gives them (its bounded capture, streaming to the
	// artifacts); else the result carries the output.
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if req.Stdout != nil {
		cmd.Stdout = req.Stdout
	}
	if req.Stderr != nil {
		cmd.Stderr = req.Stderr
	}
	setProcessGroup(cmd)
	cmd.WaitDelay = waitDelay
	ctl, err := e.launch.prepare(cmd, e.opts.StopGrace)
	if err != nil {
		return res, fmt.Errorf("exec %s: %w", req.Argv[0], err)
	}
	cmd.Cancel = func() error {
		if ctl != nil {
			ctl.Kill() // the keeper kills the tree, then exits as its command did
			return nil
		}
		return signalGroup(cmd.Process, syscall.SIGKILL)
	}
	err = e.launch.start(cmd, ctl)
	if err == nil {
		err = cmd.Wait()
	}
	ctl.Kill() // the tree is empty already: this releases the pipe
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		return res, fmt.Errorf("exec %s: %w", req.Argv[0], ctx.Err())
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Exit = float64(exitCode(exitErr.ProcessState))
	default:
		return res, fmt.Errorf("exec %s: %w", req.Argv[0], err)
	}
	if capture != nil {
		res.Captured = captureGroups(capture, res.Stdout)
	}
	return res, nil
}

// commandEnv is the environment of a command: the base (Options.Env, else this process's),
// then Options.AddEnv, then the step's env, each in name order (a later name wins, as exec
// keeps the last of duplicates). nil when nothing is added: the command inherits ours.
func commandEnv(opts *Options, step map[string]string) []string {
	if len(opts.AddEnv) == 0 && len(step) == 0 {
		return opts.Env
	}
	env := slices.Clone(opts.Env)
	if env == nil {
		env = os.Environ()
	}
	for _, add := range []map[string]string{opts.AddEnv, step} {
		for _, k := range slices.Sorted(maps.Keys(add)) {
			env = append(env, k+"="+add[k])
		}
	}
	return env
}

// captureGroups returns the named groups of the pattern's first match in s; an empty map
// when it does not match.
func captureGroups(re *regexp.Regexp, s string) map[string]string {
	if out := schema.CaptureMatch(re, s); out != nil {
		return out
	}
	return map[string]string{}
}
