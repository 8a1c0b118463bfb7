// Package earlysignal catches SIGINT and SIGTERM from the first moments of the process, before
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

func init() { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }

// Take returns the channel that has received SIGINT and SIGTERM since the process started,
// and the function that stops delivery to it. After Release, it catches them again from now.
func Take() (<-chan os.Signal, func()) {
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// Release gives SIGINT and SIGTERM back to their default action, for a command that does not
// handle them. A signal caught before is raised again, so the process ends as it would have
// without this package.
func Release() {
	signal.Stop(ch)
	select {
	case s := <-ch:
		if ss, ok := s.(syscall.Signal); ok {
			_ = syscall.Kill(os.Getpid(), ss)
		}
	default:
	}
}
