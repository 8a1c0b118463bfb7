package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

func TestLeadingTime(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // RFC 3339 Nano, "" for none
	}{
		{`[2026-07-02T10:53:45.123Z] "GET /echo HTTP/1.1" 503 UO`, "2026-07-02T10:53:45.123Z"},
		{"2026-07-02T10:53:45.123456789Z stdout F hello", "2026-07-02T10:53:45.123456789Z"},
		{"2026-07-02T19:53:45+09:00 flip", "2026-07-02T19:53:45+09:00"},
		{"2026-07-02 10:53:45 no T", ""},
		{"hello 2026-07-02T10:53:45Z", ""},
		{"", ""},
		{"[", ""},
	} {
		got, ok := leadingTime(tc.line)
		if tc.want == "" {
			if ok {
				t.Errorf("leadingTime(%q) = %v, want none", tc.line, got)
			}
			continue
		}
		if !ok || got.Format(time.RFC3339Nano) != tc.want {
			t.Errorf("leadingTime(%q) = %v %v, want %s", tc.line, got, ok, tc.want)
		}
	}
}

func TestLogsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mtime time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	mark := time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC)
	write("access.log", "[2026-07-02T09:59:59Z] \"GET / HTTP/1.1\" 200 - old\n"+
		"[2026-07-02T10:00:00Z] \"GET / HTTP/1.1\" 503 UO new\n"+
		"  continuation of the line above\r\n"+
		"[2026-07-02T10:00:01Z] \"GET / HTTP/1.1\" 200 - newer\n", mark.Add(time.Hour))
	write("plain-new.log", "a\nb\n", mark.Add(time.Minute))
	write("plain-old.log", "a\nb\n", mark.Add(-time.Minute))
	tg := newTarget(t, nil, Options{Dir: dir})
	ctx, cancel := bg()
	defer cancel()
	read := func(file string) []string {
		t.Helper()
		lines, err := schema.ReadLogs(ctx, tg.Logs, schema.Logs{File: file}, mark)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range lines {
			out = append(out, l.Time.UTC().Format("15:04:05")+" "+l.Text)
		}
		return out
	}
	if got := strings.Join(read("access.log"), "|"); got != `10:00:00 [2026-07-02T10:00:00Z] "GET / HTTP/1.1" 503 UO new|`+
		`10:00:00   continuation of the line above|10:00:01 [2026-07-02T10:00:01Z] "GET / HTTP/1.1" 200 - newer` {
		t.Errorf("access.log since the mark: %s", got)
	}
	if got := strings.Join(read(filepath.Join(dir, "plain-new.log")), "|"); got != "10:01:00 a|10:01:00 b" {
		t.Errorf("plain file written after the mark: %s", got)
	}
	if got := read("plain-old.log"); len(got) != 0 {
		t.Errorf("plain file written before the mark: %q", got)
	}
	for _, req := range []schema.Logs{
		{File: "missing.log"},
		{},
		{Process: "p", File: "f"},
		{PodRef: schema.PodRef{Pod: "client"}},
	} {
		if _, err := schema.ReadLogs(ctx, tg.Logs, req, mark); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}

// A file that grows while it is read is read as it was when the step opened it: the read ends
// however fast the writer goes; and a read of a big file stops when its context ends.
func TestLogsFileGrowingOrHuge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grow.log")
	line := "2030-01-01T00:00:00Z " + strings.Repeat("z", 78) + "\n"
	chunk := strings.Repeat(line, 10000) // 1 MB
	if err := os.WriteFile(path, []byte(strings.Repeat(chunk, 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wrote sync.WaitGroup
	wrote.Go(func() {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = f.WriteString(chunk)
			}
		}
	})
	defer func() { close(stop); wrote.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	if err := readLogFile(ctx, path, time.Time{}, func(schema.LogLine) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n < 80000 {
		t.Errorf("%d lines, want at least the 80000 written before the read", n)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := readLogFile(ctx, path, time.Time{}, func(schema.LogLine) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("read with an ended context: %v, want it to stop", err)
	}
}
