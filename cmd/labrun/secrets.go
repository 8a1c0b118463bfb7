package main

import (
	"io"
	"sync"

	"labrun.dev/labrun/interp"
)

// consoleSecrets hides the secret vars of the scenario that runs in what labrun prints (the
// record and the reports are hidden by the runner).
type consoleSecrets struct {
	mu sync.Mutex
	r  *interp.Redactor
}

// set makes r the Redactor of what is printed from now on (nil: none).
func (c *consoleSecrets) set(r *interp.Redactor) {
	c.mu.Lock()
	c.r = r
	c.mu.Unlock()
}

// wrap returns w with the secrets hidden, each Write on its own (labrun prints whole lines).
func (c *consoleSecrets) wrap(w io.Writer) io.Writer { return &secretWriter{c, w} }

type secretWriter struct {
	c *consoleSecrets
	w io.Writer
}

func (s *secretWriter) Write(p []byte) (int, error) {
	s.c.mu.Lock()
	r := s.c.r
	s.c.mu.Unlock()
	if r == nil {
		return s.w.Write(p)
	}
	if _, err := io.WriteString(s.w, r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
