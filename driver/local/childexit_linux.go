package local

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"
)

// childExit says how pid, a child of this process, ended ("signal: killed", "exit status 3"),
// or "" while it runs, without reaping it: the goroutine in its Wait still gets its status.
// The run asks whether the backend host is gone as the run ends; under load that goroutine
// may not have run yet though the host was killed long before (a load after it got no
// answer), and the run said FAILED over the claims of a world that was gone.
func childExit(pid int) string {
	const (
		pPID    = 1         // P_PID
		wExited = 4         // WEXITED
		wNoHang = 1         // WNOHANG
		wNoWait = 0x1000000 // WNOWAIT
		cldExit = 1         // CLD_EXITED; CLD_KILLED and CLD_DUMPED are by a signal
	)
	var info [128]byte // siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info)), wExited|wNoHang|wNoWait, 0, 0)
	if errno != 0 {
		return "" // not a child of ours (any more: reaped by its Wait, which then says it)
	}
	// The union after si_signo, si_errno and si_code is aligned as a pointer is.
	union := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		union = 16
	}
	at := func(off int) int32 { return int32(binary.NativeEndian.Uint32(info[off:])) }
	if at(union) == 0 { // si_pid: no child of that pid has changed state
		return ""
	}
	code, status := at(8), at(union+8)
	if code == cldExit {
		return fmt.Sprintf("exit status %d", status)
	}
	return "signal: " + syscall.Signal(status).String()
}
