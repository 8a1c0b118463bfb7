package local

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// spawner starts commands, those without a keeper with SIGKILL as their parent-death signal:
// the kernel kills such a child the moment labrun dies, however it dies. Linux sends that signal when the *thread*
// that forked the child exits, not the process; so a target's commands are all started from
// one goroutine locked to its thread, which lives until the target closes. Its end then
// terminates the thread, which kills any direct child still running: a last resort after
// the processes were stopped.
type spawner struct {
	once sync.Once
	mu   sync.Mutex
	ch   chan spawnReq
	done bool
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

func (s *spawner) start(cmd *exec.Cmd, deathsig bool) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if deathsig {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return errors.New("the local target is closed")
	}
	s.once.Do(func() {
		s.ch = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			for req := range s.ch {
				req.errc <- req.cmd.Start()
			}
		}()
	})
	ch := s.ch
	s.mu.Unlock()
	errc := make(chan error, 1)
	ch <- spawnReq{cmd, errc}
	return <-errc
}

// stop ends the spawner's goroutine, and with it its thread.
func (s *spawner) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done && s.ch != nil {
		close(s.ch)
	}
	s.done = true
}
