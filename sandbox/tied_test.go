package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartTiedChildDiesWithParent starts a copy of this test binary that starts `sleep 60`
// with StartTied, prints its pid and exits at once (as a test binary killed by go test's timeout
// does): the sleep must be gone soon after. No sandbox is started.
func TestStartTiedChildDiesWithParent(t *testing.T) {
	if os.Getenv("LABRUN_TIED_HELPER") == "1" {
		cmd := exec.Command("sleep", "60")
		if err := StartTied(cmd); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
	self := exec.Command(os.Args[0], "-test.run=^TestStartTiedChildDiesWithParent$")
	self.Env = append(os.Environ(), "LABRUN_TIED_HELPER=1")
	out, err := self.Output()
	if err != nil {
		t.Fatalf("the helper process: %v\n%s", err, out)
	}
	line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the helper printed %q, want the child's pid", out)
	}
	// Polled, not timed: the kernel kills the child as its parent exits; 10 s is only how long
	// to wait before calling it alive.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if !alive(pid) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the child (pid %d) outlived the process that started it", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs (a zombie nobody has reaped yet is dead).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
