//go:build !linux

package local

import (
	"errors"
	"os/exec"
	"sync"
)

// spawner starts commands; only Linux has a parent-death signal.
type spawner struct {
	mu   sync.Mutex
	done bool
}

func (s *spawner) start(cmd *exec.Cmd, _ bool) error {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done {
		return errors.New("the local target is closed")
	}
	return cmd.Start()
}

func (s *spawner) stop() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}
