package schema

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// How much output labrun holds in memory, and in the record that expressions and reports
// read: the first OutputHead and the last OutputTail bytes of a command's stdout or stderr,
// and of the lines a logs step keeps. The whole output is streamed to the step's artifact
// file as it comes, so a step that prints gigabytes costs disk, not memory.
const (
	OutputHead = 1 << 20
	OutputTail = 1 << 20
)

// Capture is an io.Writer that streams everything to w (nil: nowhere) and keeps the first
// head and the last tail bytes. It is safe for concurrent use; an error of w is kept (Err)
// and stops the streaming, not the capture.
type Capture struct {
	mu         sync.Mutex
	w          io.Writer
	err        error
	head, tail int
	first      []byte
	ring       []byte // the last bytes, from ringAt on, wrapping
	ringAt     int
	size       int64
}

// NewCapture returns a Capture of head and tail bytes that streams to w.
func NewCapture(w io.Writer, head, tail int) *Capture {
	return &Capture{w: w, head: head, tail: tail}
}

// Write keeps what fits and streams all of p.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	written := len(p)
	if c.w != nil && c.err == nil {
		if _, err := c.w.Write(p); err != nil {
			c.err = err
		}
	}
	c.size += int64(len(p))
	if n := min(c.head-len(c.first), len(p)); n > 0 {
		c.first = append(c.first, p[:n]...)
		p = p[n:]
	}
	if c.tail == 0 || len(p) == 0 {
		return written, nil
	}
	if len(p) >= c.tail {
		c.ring = append(c.ring[:0], p[len(p)-c.tail:]...)
		c.ringAt = 0
		return written, nil
	}
	for len(p) > 0 {
		if len(c.ring) < c.tail {
			n := min(c.tail-len(c.ring), len(p))
			c.ring = append(c.ring, p[:n]...)
			p = p[n:]
			continue
		}
		n := copy(c.ring[c.ringAt:], p)
		c.ringAt = (c.ringAt + n) % c.tail
		p = p[n:]
	}
	return written, nil
}

// Size is how many bytes were written.
func (c *Capture) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Cut reports whether more was written than the capture keeps.
func (c *Capture) Cut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size > int64(len(c.first)+len(c.ring))
}

// Err is the first error of the stream's writer.
func (c *Capture) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Text is what was written when it was all kept; otherwise the head and the tail, cut at
// whole characters, around a line that says how much is missing.
func (c *Capture) Text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte(nil), c.ring[c.ringAt:]...), c.ring[:c.ringAt]...)
	kept := int64(len(c.first) + len(tail))
	if c.size == kept {
		return string(c.first) + string(tail)
	}
	head := c.first
	for i := len(head) - 1; i >= max(0, len(head)-utf8.UTFMax); i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				head = head[:i] // a character cut at the end
			}
			break
		}
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:] // a character cut at the start
	}
	cut := c.size - int64(len(head)+len(tail))
	return fmt.Sprintf("%s\n… %d bytes cut (the whole output, %d bytes, is in the step's artifact file) …\n%s", head, cut, c.size, tail)
}

// MaxLine bounds a line of output held in memory: a longer one (a binary blob, a progress bar
// without newlines) is handed on in pieces of this size.
const MaxLine = 1 << 20

// ReadLines hands each line of r to line, without its "\n" or "\r\n", in pieces of at most
// MaxLine, and stops when ctx ends (checked every MiB read): it holds one line in memory,
// whatever the size of r. The slice is line's only until it returns.
func ReadLines(ctx context.Context, r io.Reader, line func([]byte)) error {
	return ReadLinesAt(ctx, r, func(b []byte, _ int64) { line(b) })
}

// ReadLinesAt is ReadLines that also hands each line where it starts in r, in bytes.
func ReadLinesAt(ctx context.Context, r io.Reader, line func(text []byte, at int64)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	var pos, at int64 // bytes read; where the line being read starts
	for read := 0; ; {
		frag, err := br.ReadSlice('\n')
		pos += int64(len(frag))
		if read += len(frag); read >= 1<<20 {
			read = 0
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) && len(long)+len(frag) < MaxLine {
			long = append(long, frag...)
			continue
		}
		text := frag
		if len(long) > 0 {
			text = append(long, frag...)
			long = long[:0]
		}
		if len(text) > 0 {
			line(bytes.TrimSuffix(bytes.TrimSuffix(text, []byte("\n")), []byte("\r")), at)
		}
		at = pos
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}
