package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"labrun.dev/labrun/schema"
)

// logReader reads the output of a process step or a local file. Match and capture are the
// interpreter's; this returns the lines.
type logReader struct{ w *world }

// Logs returns the lines written at or after since.
//
// For a process, each line carries the time it was read from the process.
//
// For a file (path relative to the scenario's directory), a line that starts with a
// timestamp — RFC 3339, bare or in brackets, as in Envoy's access log "[2026-07-02T10:53:45.123Z]"
// or a CRI log line — has that time, and so has each line after it up to the next timestamp.
// A time is as precise as it is written: a line is read unless the whole unit of its stamp
// lies before the mark (schema.LogSince.NotBefore), so "04:06:39Z" is read after a mark at
// 04:06:39.41.
// The lines before the file's first timestamp (all of them in a file without timestamps)
// are placed by where the file ended at the mark (since.File, see MarkFile): those it gained
// after the mark are new and have the file's modification time; those it held are not. A
// file that was truncated or replaced since the mark, modified after it and no longer than it
// was (rewritten, with the same bytes too), or that labrun did not note at the
// mark and was modified after it, is refused when it has such lines (which of them are new
// cannot be told) or, replaced or shorter than at the mark, no line at all (what was written
// to it since went with the old file or the truncation). Lines are returned as written, timestamps included.
func (l *logReader) Logs(ctx context.Context, req schema.Logs, since schema.LogSince, line func(schema.LogLine)) error {
	if req.Pod != "" || req.Selector != "" || req.Container != "" || req.Namespace != "" {
		return errors.New("logs: pod, selector, container and namespace need the kube target; use process or file")
	}
	switch {
	case req.Process != "" && req.File != "":
		return errors.New("logs: process or file, not both")
	case req.Process != "":
		p, err := l.w.procs.lookup(req.Process)
		if err != nil {
			return fmt.Errorf("logs: %w", err)
		}
		return p.since(since.Time, line)
	case req.File != "":
		if err := readLogFile(ctx, l.path(req.File), since, line); err != nil {
			return fmt.Errorf("logs: %w", err)
		}
		return nil
	}
	return errors.New("logs: needs process or file")
}

// path is where a file of the scenario is: relative to its directory.
func (l *logReader) path(file string) string {
	if !filepath.IsAbs(file) && l.w.opts.Dir != "" {
		return filepath.Join(l.w.opts.Dir, file)
	}
	return file
}

// MarkFile notes where the file ends now (schema.FileMarker): whether it is there, its size,
// what file it is and a sum of its first and last bytes.
func (l *logReader) MarkFile(path string) (schema.FileMark, error) {
	f, fi, err := openRegular(l.path(path))
	if errors.Is(err, fs.ErrNotExist) {
		return schema.FileMark{}, nil
	}
	if err != nil {
		return schema.FileMark{}, err
	}
	defer f.Close()
	sum, err := edgeSum(f, fi.Size())
	if err != nil {
		return schema.FileMark{}, err
	}
	return schema.FileMark{Exists: true, Size: fi.Size(), ID: fileID(fi), Sum: sum, ModTime: fi.ModTime()}, nil
}

// edgeBytes is how much of each end of a file's first size bytes edgeSum reads.
const edgeBytes = 64 << 10

// edgeSum is a digest of the first and the last edgeBytes of the file's first size bytes:
// what a file rewritten since most likely changed.
func edgeSum(f *os.File, size int64) (string, error) {
	h := sha256.New()
	head := min(size, edgeBytes)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, head)); err != nil {
		return "", err
	}
	if tail := max(head, size-edgeBytes); tail < size {
		if _, err := io.Copy(h, io.NewSectionReader(f, tail, size-tail)); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// gained says from which byte on the file holds what it gained since the mark; when that
// cannot be told (no mark, a file truncated or replaced since), -1 and why.
func gained(f *os.File, fi os.FileInfo, since schema.LogSince) (int64, string) {
	m := since.File
	switch {
	case m == nil && fi.ModTime().Before(since.Time):
		return fi.Size(), "" // not written since the mark: nothing is new
	case m == nil:
		return -1, "labrun did not note where it ended at the mark, and it was modified after"
	case !m.Exists:
		return 0, "" // made after the mark: all of it is new
	case m.ID != "" && fileID(fi) != "" && m.ID != fileID(fi):
		return -1, "another file was put in its place since the mark (rotated or rewritten)"
	case fi.Size() < m.Size:
		return -1, fmt.Sprintf("it was truncated since the mark (it held %d bytes then, %d now)", m.Size, fi.Size())
	case fi.Size() == m.Size && !m.ModTime.IsZero() && !fi.ModTime().Equal(m.ModTime):
		// Written since, and no longer: what it held was written again (truncated and
		// rewritten with the same bytes reads as nothing new by size and sum alone).
		return -1, fmt.Sprintf("the %d bytes it held at the mark were rewritten since (it was modified after the mark and gained nothing)", m.Size)
	}
	if sum, err := edgeSum(f, m.Size); err != nil || sum != m.Sum {
		return -1, fmt.Sprintf("the %d bytes it held at the mark were rewritten since", m.Size)
	}
	return m.Size, ""
}

// readLogFile reads the file as it was when the step opened it (what is written after that,
// by a program that goes on writing, is not waited for), in pieces of at most maxLineBytes,
// and stops when ctx ends: a logs step on a file of any size, growing or not, ends by its
// timeout at the latest and holds no more than one line in memory.
func readLogFile(ctx context.Context, path string, since schema.LogSince, line func(schema.LogLine)) error {
	f, fi, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	from, why := gained(f, fi, since)
	var current time.Time  // the last timestamp read; zero before the first
	var unit time.Duration // its precision, as written (schema.StampUnit)
	var refused error
	err = schema.ReadLinesAt(ctx, io.LimitReader(f, fi.Size()), func(b []byte, at int64) {
		s := string(b)
		if t, u, ok := leadingTime(s); ok {
			current, unit = t, u
		}
		switch {
		case !current.IsZero():
			if since.NotBefore(current, unit) {
				line(schema.LogLine{Time: current, Text: s})
			}
		case from < 0:
			if refused == nil {
				refused = fmt.Errorf("%s: its lines carry no timestamps and %s, so which of them were written since the mark cannot be told; write a new file per run, or start each line with an RFC 3339 time", path, why)
			}
		case at >= from:
			line(schema.LogLine{Time: fi.ModTime(), Text: s})
		}
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err == nil && refused == nil && from < 0 && current.IsZero() && lostSince(fi, since.File) {
		// No line at all: a file rotated or truncated after its program wrote what the step
		// looks for holds nothing now, and reading nothing would say nothing was written.
		refused = fmt.Errorf("%s: it holds no line and %s, so what was written to it since the mark cannot be read; write a new file per run, or read it before it is rotated or emptied", path, why)
	}
	if err == nil {
		err = refused
	}
	return err
}

// lostSince says whether the file lost bytes it held at mark m: another file was put in its
// place, or it is shorter. (An empty file emptied again, ": > app.log", lost nothing.)
func lostSince(fi os.FileInfo, m *schema.FileMark) bool {
	if m == nil || !m.Exists {
		return false
	}
	return m.ID != "" && fileID(fi) != "" && m.ID != fileID(fi) || fi.Size() < m.Size
}

// openRegular opens a log file for reading and refuses what is not a regular file. The open
// does not block (O_NONBLOCK): a FIFO with no writer would otherwise hold the step in open(2)
// past its timeout and every interrupt, where no context reaches it. A device such as
// /dev/zero (size 0: it would read as a file that gained nothing) and a directory are refused
// the same way: neither is a log whose lines since a mark can be told.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s): a logs step reads a file that a program appends its lines to", path, schema.FileKind(fi.Mode()))
	}
	return f, fi, nil
}

// leadingTime parses an RFC 3339 timestamp at the start of a line, bare or in brackets, and
// says how precise it is as written (schema.StampUnit).
func leadingTime(line string) (time.Time, time.Duration, bool) {
	s := strings.TrimPrefix(line, "[")
	end := strings.IndexAny(s, " ]\t")
	if end < 0 {
		end = len(s)
	}
	tok := s[:end]
	if len(tok) < len("2006-01-02T15:04:05Z") || tok[4] != '-' || (tok[10] != 'T' && tok[10] != 't') {
		return time.Time{}, 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, tok)
	if err != nil {
		return time.Time{}, 0, false
	}
	return t, schema.StampUnit(tok), true
}
