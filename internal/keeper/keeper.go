// Package keeper runs each command the local target starts under a keeper: a small copy of
// labrun that is the command's parent and a Linux child subreaper (PR_SET_CHILD_SUBREAPER).
// Whatever a descendant of the command does — a new session (setsid), a cleared environment
// (env -i, sudo, a daemon), a double fork — it stays in the keeper's tree: an orphan is
// reparented to the keeper, not to init. So the keeper can always kill every descendant:
//
//   - when labrun asks (Control.Kill: a KILL of the process, a cancelled exec step);
//   - when labrun is gone, however it ended (kill -9 included): the keeper's control pipe, whose
//     other end only labrun holds, reaches end of file;
//   - when the command itself exits: what it left running gets TERM, then KILL after the grace
//     period.
//
// The keeper exits only once its tree is empty, with the command's own exit status (a command
// killed by a signal makes the keeper die of the same signal), so that a keeper that has
// exited means, truly, that nothing of the command runs any more.
//
// The keeper is this same binary, started again with Env set: the init below runs it and exits
// before main. It imports only the standard library's process packages, so, like
// internal/earlysignal, it is initialised within the first milliseconds, long before the
// packages labrun links (CUE, client-go, fortio).
package keeper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Env, set in a keeper's environment (to the grace period in nanoseconds), makes the binary
// act as a keeper; the command does not inherit it.
const Env = "LABRUN_KEEPER"

// Arg0 is the keeper's argv[0], as ps shows it.
const Arg0 = "labrun-keeper"

// controlFD is the descriptor of the control pipe's read end in the keeper.
const controlFD = 3

func init() {
	if v, ok := os.LookupEnv(Env); ok {
		os.Exit(run(v))
	}
}

// Control is labrun's end of one keeper.
type Control struct {
	r, w *os.File
}

// Wrap rewrites cmd, not started yet, to run under a keeper; when keepers are not supported
// (not Linux) it returns nil and leaves cmd as it is. grace is how long what the command
// leaves running gets between TERM and KILL once it exits. Call Started after cmd.Start (or
// after it failed) and Kill to kill the command's whole tree.
func Wrap(cmd *exec.Cmd, grace time.Duration) (*Control, error) {
	if !supported() {
		return nil, nil
	}
	if cmd.Err != nil {
		return nil, cmd.Err // not found on PATH: say so now, as exec does
	}
	// A path with a slash is not looked up by exec.Command: check it here, where exec would
	// have failed, rather than in the keeper.
	path := cmd.Path
	if !filepath.IsAbs(path) && cmd.Dir != "" {
		path = filepath.Join(cmd.Dir, path)
	}
	if _, err := exec.LookPath(path); err != nil {
		return nil, err
	}
	self := "/proc/self/exe" // this binary even when its file was replaced since
	if _, err := os.Stat(self); err != nil {
		return nil, err
	}
	r, w, err := os.Pipe() // close-on-exec: no command but the keeper gets either end
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(e string) bool { return strings.HasPrefix(e, Env+"=") })
	cmd.Env = append(env, Env+"="+strconv.FormatInt(int64(grace), 10))
	cmd.Args = append([]string{Arg0, cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.ExtraFiles = append([]*os.File{r}, cmd.ExtraFiles...)
	return &Control{r: r, w: w}, nil
}

// Started releases labrun's copy of the keeper's end of the pipe; call it once the command
// has started (or failed to).
func (c *Control) Started() {
	if c != nil && c.r != nil {
		c.r.Close()
		c.r = nil
	}
}

// Kill makes the keeper kill every process of its tree at once (SIGKILL) and exit. It
// returns at once; wait for the command to learn that it is done.
func (c *Control) Kill() {
	if c != nil {
		c.Started()
		c.w.Close() // a second Close is harmless
	}
}

// errUsage is a keeper started without its command.
var errUsage = errors.New("labrun keeper: no command")
