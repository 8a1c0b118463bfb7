package local

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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
func (l *logReader) Logs(ctx context.Context, req schema.Logs, since time.Time) ([]schema.LogLine, error) {
	if req.Pod != "" || req.Selector != "" || req.Container != "" || req.Namespace != "" {
		return nil, errors.New("logs: pod, selector, container and namespace need the kube target; use process or file")
	}
	switch {
	case req.Process != "" && req.File != "":
		return nil, errors.New("logs: process or file, not both")
	case req.Process != "":
		p, err := l.w.procs.lookup(req.Process)
		if err != nil {
			return nil, fmt.Errorf("logs: %w", err)
		}
		return p.since(since), nil
	case req.File != "":
		path := req.File
		if !filepath.IsAbs(path) && l.w.opts.Dir != "" {
			path = filepath.Join(l.w.opts.Dir, path)
		}
		lines, err := readLogFile(ctx, path, since)
		if err != nil {
			return nil, fmt.Errorf("logs: %w", err)
		}
		return lines, nil
	}
	return nil, errors.New("logs: needs process or file")
}

func readLogFile(ctx context.Context, path string, since time.Time) ([]schema.LogLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	current := fi.ModTime()
	var out []schema.LogLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	for n := 0; sc.Scan(); n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		text := strings.TrimSuffix(sc.Text(), "\r")
		if t, ok := leadingTime(text); ok {
			current = t
		}
		if !current.Before(since) {
			out = append(out, schema.LogLine{Time: current, Text: text})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
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
