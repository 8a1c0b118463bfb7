package schema

import "io/fs"

// FileKind names the type of a file that is not a regular one, for a message: "a directory",
// "a named pipe (FIFO)", "a socket", "a character device", "a device". A scenario file (dsl)
// and a logs step's file (driver/local) are refused by it.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a file of type " + m.Type().String()
}
