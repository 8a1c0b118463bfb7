//go:build linux

package keeper

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func supported() bool { return true }

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h, since Linux 3.4).
const prSetChildSubreaper = 36

// killWithin bounds how long the keeper goes on killing what its tree holds (a process in
// uninterruptible sleep dies only when it wakes); it exits after that whatever is left.
const killWithin = 5 * time.Second

// run is the keeper's main: argv is [Arg0, path, command's argv...].
func run(graceText string) int {
	grace, _ := strconv.ParseInt(graceText, 10, 64)
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, errUsage)
		return 127
	}
	// The command is forked from this thread with SIGKILL as its parent-death signal, which
	// Linux sends when the forking thread ends: it must live as long as the keeper.
	runtime.LockOSThread()
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "labrun keeper: PR_SET_CHILD_SUBREAPER: %v\n", errno)
		return 127
	}
	syscall.CloseOnExec(controlFD)
	control := os.NewFile(controlFD, "labrun-control")
	// Signals for the process group (labrun's TERM to a process, a terminal's keys) are the
	// command's business; the keeper stays until its tree is empty. SIGCHLD wakes it to reap.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGCHLD)

	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, Env+"=") {
			env = append(env, e)
		}
	}
	child, err := syscall.ForkExec(os.Args[1], os.Args[2:], &syscall.ProcAttr{
		Env: env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "labrun: %s: %v\n", os.Args[1], err)
		return 127
	}
	gone := make(chan struct{}) // labrun asked for a kill, or is gone
	go func() {
		_, _ = io.Copy(io.Discard, control)
		close(gone)
	}()

	k := &tree{self: os.Getpid(), child: child}
	for !k.exited {
		select {
		case <-sigs:
			k.reap()
		case <-gone:
			k.kill(syscall.SIGKILL)
			return k.exit()
		}
	}
	// The command has exited: what it left gets TERM, then KILL after the grace period (or at
	// once, when labrun asks or is gone).
	if k.signal(syscall.SIGTERM) > 0 {
		deadline := time.NewTimer(time.Duration(grace))
		tick := time.NewTicker(20 * time.Millisecond)
	wait:
		for {
			select {
			case <-gone:
				break wait
			case <-deadline.C:
				break wait
			case <-sigs:
			case <-tick.C:
			}
			k.reap()
			if len(k.descendants()) == 0 {
				break wait
			}
		}
		deadline.Stop()
		tick.Stop()
	}
	k.kill(syscall.SIGKILL)
	return k.exit()
}

// tree is the keeper's view of its descendants.
type tree struct {
	self, child int
	status      syscall.WaitStatus
	exited      bool
}

// reap collects every child that has ended (the command, and orphans reparented here).
func (t *tree) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		if pid == t.child {
			t.status, t.exited = ws, true
		}
	}
}

// signal sends sig to every live descendant and returns how many there were.
func (t *tree) signal(sig syscall.Signal) int {
	d := t.descendants()
	for _, pid := range d {
		_ = syscall.Kill(pid, sig)
	}
	return len(d)
}

// kill signals the descendants until none is left (a process may fork while the others are
// being killed: its orphans come to the keeper), reaping as it goes, within killWithin.
func (t *tree) kill(sig syscall.Signal) {
	deadline := time.Now().Add(killWithin)
	for round := 0; ; round++ {
		t.reap()
		if t.signal(sig) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Duration(min(round+1, 20)) * time.Millisecond)
	}
	if !t.exited {
		var ws syscall.WaitStatus
		for {
			pid, err := syscall.Wait4(t.child, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if pid == t.child {
				t.status, t.exited = ws, true
			}
			break
		}
	}
	t.reap()
}

// exit ends the keeper with the command's status: its exit code, or death by its signal.
func (t *tree) exit() int {
	ws := t.status
	if !t.exited {
		return 128 + int(syscall.SIGKILL)
	}
	if ws.Signaled() {
		sig := ws.Signal()
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}) // the command's core, if any, is its own
		signal.Reset(sig)
		_ = syscall.Kill(t.self, sig)
		time.Sleep(100 * time.Millisecond) // a signal the runtime keeps (SIGSEGV...) ends here
		return 128 + int(sig)
	}
	return ws.ExitStatus()
}

// descendants lists the live processes below the keeper, by the parent pids of /proc.
// Zombies are left out: they are dead, and the keeper reaps its own.
func (t *tree) descendants() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := parentOf(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{t.self}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent pid and state from /proc/<pid>/stat: "pid (comm) state
// ppid ...", comm possibly holding spaces and parentheses, hence the last ')'.
func parentOf(pid int) (int, byte, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}
