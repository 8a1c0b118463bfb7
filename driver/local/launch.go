package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"labrun.dev/labrun/internal/keeper"
)

// markerEnv is set on every command the local target starts (process and exec steps), with a
// value unique to the target: a process that holds a ready check's port is known as one of the
// run's by it, and what left a process's group still gets its TERM (see marked_linux.go). It is
// a help, not a guarantee (env -i clears it): what guarantees that nothing outlives the run is
// the keeper every command runs under (internal/keeper).
const markerEnv = "LABRUN_RUN_MARKER"

// launcher starts the commands of one local target: each under a keeper (on Linux: a child
// subreaper that kills the command's whole tree when asked, when the command exits, or when
// labrun is gone), else with SIGKILL as its parent-death signal.
type launcher struct {
	marker string
	spawn  spawner
}

func newLauncher() *launcher {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &launcher{marker: fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b))}
}

// env returns env (nil: this process's) with the run's marker added.
func (l *launcher) env(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(slices.Clone(env), markerEnv+"="+l.marker)
}

// prepare sets cmd, which must lead its own process group, to run under a keeper; grace is
// the time what the command leaves running gets between TERM and KILL once it exits. The
// Control (nil without keepers) kills the command's whole tree.
func (l *launcher) prepare(cmd *exec.Cmd, grace time.Duration) (*keeper.Control, error) {
	return keeper.Wrap(cmd, grace)
}

// start starts a prepared cmd.
func (l *launcher) start(cmd *exec.Cmd, ctl *keeper.Control) error {
	// A keeper must outlive labrun to kill what is left: it watches its control pipe instead
	// of dying with labrun's thread.
	err := l.spawn.start(cmd, ctl == nil)
	ctl.Started()
	if err != nil {
		ctl.Kill()
	}
	return err
}

// signalEscaped sends sig to what carries the run's marker outside the keepers: a descendant
// that left its process's group gets the group's TERM too.
func (l *launcher) signalEscaped(sig syscall.Signal) {
	signalMarked(l.marker, os.Getpid(), sig)
}

// close stops starting commands.
func (l *launcher) close(context.Context) error {
	l.spawn.stop()
	return nil
}
