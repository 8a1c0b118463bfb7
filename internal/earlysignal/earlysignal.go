// Package earlysignal catches SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) from the first moments of the process, before
// the packages labrun links (CUE, client-go, fortio) have finished their initialisation, which
// takes tens of milliseconds. Go initialises packages in import-path order once their own
// imports are ready; this one imports only os/signal, which is ready within the first
// milliseconds, so it runs long before the heavy ones and a signal that comes meanwhile is kept
// instead of killing labrun by the default action.
//
// It holds a process global, like the CLI's process type, and only the CLI may use it: Take for
// the commands that handle interrupts themselves, Release for every other command (and for
// the CLI's test binary, which links it too).
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

var ch = make(chan os.Signal, 4)

// caught are the signals that end a run: each gets the run's interrupt (cleanup, a report).
var caught = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// pipe receives SIGPIPE while a command that took the signals runs: a write to a closed
// terminal or pipe then fails instead of killing labrun before its cleanup. (Catching rather
// than ignoring it: an ignored signal would stay ignored in the commands labrun starts.)
var pipe = make(chan os.Signal, 1)

func init() { signal.Notify(ch, caught...) }

// Take returns the channel that has received SIGINT, SIGTERM and SIGHUP since the process
// started, and the function that stops delivery to it. After Release, it catches them again
// from now. Until that function is called, SIGPIPE does not end the process either.
func Take() (<-chan os.Signal, func()) {
	signal.Notify(ch, caught...)
	signal.Notify(pipe, syscall.SIGPIPE)
	return ch, func() { signal.Stop(ch); signal.Stop(pipe) }
}

// Release gives SIGINT, SIGTERM and SIGHUP back to their default action, for a command that
// does not handle them. A signal caught before is raised again, so the process ends as it
// would have without this package.
func Release() {
	signal.Stop(ch)
	signal.Stop(pipe)
	select {
	case s := <-ch:
		if ss, ok := s.(syscall.Signal); ok {
			_ = syscall.Kill(os.Getpid(), ss)
		}
	default:
	}
}
