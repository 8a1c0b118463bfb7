//go:build !linux

package keeper

import (
	"fmt"
	"os"
)

// Without a child subreaper, commands run directly (their process groups are signalled).
func supported() bool { return false }

func run(string) int {
	fmt.Fprintln(os.Stderr, "labrun keeper: not supported on this system")
	return 127
}
