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
func WriteWith(path string, write func(w io.Writer) error) (err error) {
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
