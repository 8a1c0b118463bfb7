package main

import (
	"fmt"
	"io"
	"sync"
)

// watchedStream is stdout or stderr as labrun writes to it: it keeps the first write that
// failed (a full disk, a pipe whose reader left), so that Main makes the exit code say it.
// Before, `labrun run x >/dev/full` printed its verdict nowhere and exited 0. A stream closed
// before labrun started (`>&-`) is not told: Go's runtime gives it /dev/null read-write, as a
// parent that discards the output on purpose does (Python's subprocess.DEVNULL, libuv's
// "ignore"), and failing such a run would be an error that is not one.
type watchedStream struct {
	name string
	w    io.Writer
	mu   sync.Mutex
	err  error
	// said: the failure has been said already (by -o json's own message).
	said bool
}

func (s *watchedStream) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	if err != nil {
		s.fail(err)
	}
	return n, err
}

func (s *watchedStream) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// failed returns the first write that failed (nil: none), and whether it has been said.
func (s *watchedStream) failed() (error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err, s.said
}

// markSaid records that the failure has been said where it happened.
func (s *watchedStream) markSaid() {
	s.mu.Lock()
	s.said = true
	s.mu.Unlock()
}

// streamsFailed is the exit code once what labrun wrote to stdout or stderr could not all be
// written: code, or 3 when it was lower (a verdict or a record that did not reach its reader
// is not a success). A stdout that failed is said on stderr, if stderr still takes it.
func (p *process) streamsFailed(code int) int {
	out, errw := p.watchedOut, p.watchedErr
	failed := false
	if out != nil {
		if err, said := out.failed(); err != nil {
			failed = true
			if !said {
				fmt.Fprintf(p.Stderr, "labrun: stdout could not be written: %v: what labrun printed there is lost\n", err)
			}
		}
	}
	if errw != nil {
		if err, _ := errw.failed(); err != nil {
			failed = true
		}
	}
	if failed && code < exitInfra {
		return exitInfra
	}
	return code
}

// markStdoutSaid records that a failed write to stdout has been said (by the command that
// made it): Main does not say it again.
func (p *process) markStdoutSaid() {
	if p.watchedOut != nil {
		p.watchedOut.markSaid()
	}
}
