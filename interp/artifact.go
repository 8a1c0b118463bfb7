package interp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// WithSpool makes the run stream the artifacts that steps write as they go (a command's
// output, a log, a process's output) to files in dir, rather than hold them in memory; the
// report moves them into its artifacts folder. The caller creates dir and removes it after the
// report is written.
func WithSpool(dir string) Option { return func(r *Runner) { r.spool = dir } }

// artifactWriter is an artifact being written: to a spool file, or, without a spool, to
// memory. The artifact is recorded at its first write (an empty stream records nothing).
type artifactWriter struct {
	ru         *run
	step, name string

	mu     sync.Mutex
	rec    *ArtifactRecord
	f      *os.File
	out    io.WriteCloser // f, through the run's Redactor
	buf    *bytes.Buffer
	err    error
	closed bool
}

// ArtifactWriter streams an artifact of the step. Once the run closed its writers (its end), a
// step its runner no longer waits for (abandoned past its timeout) gets a closed one: its
// artifact would be listed in, or written beside, a record already made (an exec's exit.txt
// written as it returns, cut).
func (rt *stepRuntime) ArtifactWriter(name string) io.WriteCloser {
	w := &artifactWriter{ru: rt.ru, step: rt.Label(), name: name}
	rt.ru.mu.Lock()
	if rt.ru.writersClosed {
		w.closed = true
	} else {
		rt.ru.writers = append(rt.ru.writers, w)
	}
	rt.ru.mu.Unlock()
	return w
}

func (w *artifactWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, os.ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if w.rec == nil {
		w.err = w.open()
		if w.err != nil {
			return 0, w.err
		}
	}
	if w.out != nil {
		n, err := w.out.Write(p)
		w.err = err
		return n, err
	}
	return w.buf.Write(p)
}

// open creates the spool file (or the buffer) and records the artifact.
func (w *artifactWriter) open() error {
	rec := &ArtifactRecord{Step: w.step, Name: w.name}
	if dir := w.ru.spool; dir != "" {
		f, err := os.CreateTemp(dir, "artifact-*")
		if err == nil {
			err = f.Chmod(0o644) // a report's file, readable as the others
		}
		if err != nil {
			return fmt.Errorf("artifact %s of %s: %w", w.name, w.step, err)
		}
		w.f, rec.Path = f, filepath.Clean(f.Name())
		w.out = w.ru.redact.Writer(f)
	} else {
		w.buf = &bytes.Buffer{}
	}
	w.rec = rec
	w.ru.mu.Lock()
	w.ru.rec.Artifacts = append(w.ru.rec.Artifacts, rec)
	w.ru.mu.Unlock()
	return nil
}

// Close ends the artifact; later writes fail.
func (w *artifactWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.buf != nil {
		w.ru.mu.Lock()
		w.rec.Data = w.buf.Bytes()
		w.ru.mu.Unlock()
	}
	if w.f != nil {
		if err := w.out.Close(); err != nil && w.err == nil {
			w.err = err
		}
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// closeWriters closes the artifacts still open at the end of the run (a process that could
// not be stopped still writes).
func (ru *run) closeWriters() {
	ru.mu.Lock()
	ws := ru.writers
	ru.writers, ru.writersClosed = nil, true
	ru.mu.Unlock()
	for _, w := range ws {
		_ = w.Close()
	}
}
