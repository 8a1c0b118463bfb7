//go:build unix

package local

import (
	"fmt"
	"os"
	"syscall"
)

// fileID names the file itself: its device and inode.
func fileID(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
