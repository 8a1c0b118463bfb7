package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// watchedStream is stdout or stderr as labrun writes to it: it keeps the first write that
// failed (a full disk, a pipe whose reader left, a stream closed before labrun started), so
// that Main makes the exit code say it. Before, `labrun run x >/dev/full` printed its verdict
// nowhere and exited 0, and so did `-o json >&-` with the records.
type watchedStream struct {
	name string
	w    io.Writer
	// closed: the stream was closed when labrun started (Go's runtime points a closed
	// standard stream at /dev/null, where every write succeeds): a document for machines
	// (-o json, -o yaml) written there fails (docWriter); what people read is let go, as a
	// harness that discards it may hand labrun /dev/null so (closedAtStart).
	closed bool

	mu  sync.Mutex
	err error
	// said: the failure has been said already (by -o json's own message).
	said bool
}

// closedStream returns the stream w writes to when it was closed when labrun started (nil:
// it was not, or w is no standard stream), through the wrapping that hides secrets.
func closedStream(w io.Writer) *watchedStream {
	if sw, ok := w.(*secretWriter); ok {
		w = sw.w
	}
	if s, ok := w.(*watchedStream); ok && s.closed {
		return s
	}
	return nil
}

// errClosedAtStart is a write to a standard stream that was closed when labrun started.
var errClosedAtStart = errors.New("it was closed when labrun started (Go's runtime gave it /dev/null, so what was written there went nowhere; redirect it to /dev/null to discard it)")

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
