package report

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically (see WriteWith).
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes path through a temporary file in the same folder, synced, then renamed
// over path: a reader (or a crash, a full disk, a signal) sees the old file or the whole new
// one, never a part of it. On error the temporary file is removed and path is untouched.
// Every file labrun writes for a report goes through here.
//
// A path that leads to a device or a pipe (--junit /dev/stdout, a FIFO a CI step reads) is
// written in place: a rename would replace the device node or the pipe by a file, and the
// reader would get nothing while labrun said nothing (as root, --junit /dev/stdout replaced
// /dev/stdout). A symbolic link is followed: the file it names is replaced, not the link.
func WriteWith(path string, write func(w io.Writer) error) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeInPlace(path, write)
	}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeInPlace writes a device or a pipe: there is no file to replace atomically.
func writeInPlace(path string, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// IsDevice says whether path leads to a device or a pipe, which WriteWith writes in place
// (nothing is created beside it).
func IsDevice(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}
