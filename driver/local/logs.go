package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// or a CRI log line — has that time; a line without one has the time of the last timestamped
// line before it, or, when no line before it has one, the file's modification time. So a
// file without timestamps is returned whole if it was written at or after since, and not at
// all otherwise. Lines are returned as written, timestamps included.
func (l *logReader) Logs(ctx context.Context, req schema.Logs, since time.Time, line func(schema.LogLine)) error {
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
		return p.since(since, line)
	case req.File != "":
		path := req.File
		if !filepath.IsAbs(path) && l.w.opts.Dir != "" {
			path = filepath.Join(l.w.opts.Dir, path)
		}
		if err := readLogFile(ctx, path, since, line); err != nil {
			return fmt.Errorf("logs: %w", err)
		}
		return nil
	}
	return errors.New("logs: needs process or file")
}

// readLogFile reads the file as it was when the step opened it (what is written after that,
// by a program that goes on writing, is not waited for), in pieces of at most maxLineBytes,
// and stops when ctx ends: a logs step on a file of any size, growing or not, ends by its
// timeout at the latest and holds no more than one line in memory.
func readLogFile(ctx context.Context, path string, since time.Time, line func(schema.LogLine)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	current := fi.ModTime()
	err = schema.ReadLines(ctx, io.LimitReader(f, fi.Size()), func(b []byte) {
		s := string(b)
		if t, ok := leadingTime(s); ok {
			current = t
		}
		if !current.Before(since) {
			line(schema.LogLine{Time: current, Text: s})
		}
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return err
}

// leadingTime parses an RFC 3339 timestamp at the start of a line, bare or in brackets.
func leadingTime(line string) (time.Time, bool) {
	s := strings.TrimPrefix(line, "[")
	end := strings.IndexAny(s, " ]\t")
	if end < 0 {
		end = len(s)
	}
	tok := s[:end]
	if len(tok) < len("2006-01-02T15:04:05Z") || tok[4] != '-' || (tok[10] != 'T' && tok[10] != 't') {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, tok)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
