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
	// base hides, for the whole command, the secret values of every matrix it expands (a
	// swept secret shows in progress lines and problems before and between runs).
	base *interp.Redactor
}

// addBase hides what r hides in everything printed from now on, runs or not.
func (c *consoleSecrets) addBase(r *interp.Redactor) {
	if r == nil {
		return
	}
	c.mu.Lock()
	c.base = interp.JoinRedactors(c.base, r)
	c.mu.Unlock()
}

// matrix is the Redactor of every matrix expanded so far (nil: none has secrets).
func (c *consoleSecrets) matrix() *interp.Redactor {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

// takeBase returns the Redactor of every matrix expanded since the last takeBase and forgets
// it: labrun lsp hides a check's secrets in what that check says, and no more after it.
func (c *consoleSecrets) takeBase() *interp.Redactor {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.base
	c.base = nil
	return r
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
	r, base := s.c.r, s.c.base
	s.c.mu.Unlock()
	if r == nil && base == nil {
		return s.w.Write(p)
	}
	if _, err := io.WriteString(s.w, base.String(r.String(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}
