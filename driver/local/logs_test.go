package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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
		got, _, ok := leadingTime(tc.line)
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
	if got := read("plain-old.log"); len(got) != 0 {
		t.Errorf("plain file written before the mark, not noted at it: %q", got)
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

// TestLogsFileStampPrecision: a time is only as precise as it is written. A line stamped
// "10:00:00Z" under a mark at 10:00:00.41 may have been written after the mark and is read (it
// was dropped, and a claim "no ERROR was logged" passed over an ERROR logged in the run); one
// whose whole unit lies before the mark is not.
func TestLogsFileStampPrecision(t *testing.T) {
	dir := t.TempDir()
	mark := time.Date(2026, 12, 5, 10, 0, 0, 410_000_000, time.UTC)
	text := "2026-12-05T09:59:59Z before, whole second\n" +
		"2026-12-05T10:00:00.3Z before, tenth\n" +
		"2026-12-05T10:00:00.409Z before, millisecond\n" +
		"2026-12-05T10:00:00Z ERROR disk full\n" +
		"  its continuation\n" +
		"2026-12-05T10:00:00.4Z within the tenth\n" +
		"2026-12-05T10:00:00.410Z at the mark\n" +
		"[2026-12-05T10:00:00.4099999999Z] within ten digits\n"
	p := filepath.Join(dir, "job.log")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := newTarget(t, nil, Options{Dir: dir})
	ctx, cancel := bg()
	defer cancel()
	lines, err := schema.ReadLogs(ctx, tg.Logs, schema.Logs{File: "job.log"}, mark)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Text)
	}
	want := []string{
		"2026-12-05T10:00:00Z ERROR disk full", "  its continuation",
		"2026-12-05T10:00:00.4Z within the tenth",
		"2026-12-05T10:00:00.410Z at the mark",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines since %s:\n got %q\nwant %q", mark.Format(time.RFC3339Nano), got, want)
	}
}

// TestLogsFileMarked: the lines a file without timestamps gained after the mark are read,
// not those it held; a file that was truncated, replaced or rewritten since, or that was not
// noted at the mark and was modified after, is refused; timestamps still decide where a line
// has one.
func TestLogsFileMarked(t *testing.T) {
	since := time.Now().Add(-time.Minute)
	appendTo := func(text string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(text); err != nil {
				t.Fatal(err)
			}
		}
	}
	rewrite := func(text string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil { // O_TRUNC: the same file
				t.Fatal(err)
			}
		}
	}
	replace := func(text string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path+".new", []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}
	}
	stamp := func(d time.Duration) string { return "[" + since.Add(d).UTC().Format(time.RFC3339Nano) + "] " }
	for _, tc := range []struct {
		name    string
		before  *string // the file at the mark; nil: absent
		noMark  bool    // labrun did not note the file at the mark
		then    func(t *testing.T, path string)
		old     bool // the file's modification time is then put before the mark
		want    string
		wantErr string
	}{
		{name: "appended", before: ptr("ERROR upstream reset 503\n"), then: appendTo("INFO request ok 200\n"), want: "INFO request ok 200"},
		{name: "appended, backdated", before: ptr("ERROR upstream reset 503\n"), then: appendTo("INFO request ok 200\n"), old: true, want: "INFO request ok 200"},
		{name: "untouched", before: ptr("ERROR upstream reset 503\n"), want: ""},
		{name: "absent at the mark", then: appendTo("ERROR a\nERROR b\n"), want: "ERROR a|ERROR b"},
		{name: "a line half written at the mark is old", before: ptr("ERROR par"), then: appendTo("tial\nINFO ok\n"), want: "INFO ok"},
		{name: "truncated", before: ptr("ERROR upstream reset 503\n"), then: rewrite("INFO\n"), wantErr: "truncated since the mark (it held 25 bytes then, 5 now)"},
		{name: "rewritten longer in place", before: ptr("ERROR upstream reset 503\n"), then: rewrite("INFO request ok 200 and more\n"), wantErr: "the 25 bytes it held at the mark were rewritten since"},
		{name: "rewritten with the same bytes", before: ptr("WARN disk\nWARN net\n"), then: rewrite("WARN disk\nWARN net\n"), wantErr: "the 19 bytes it held at the mark were rewritten since"},
		{name: "replaced", before: ptr("ERROR upstream reset 503\n"), then: replace("ERROR upstream reset 503\nINFO\n"), wantErr: "another file was put in its place"},
		// A file rotated (or truncated) after the 503 line and empty when read: the line went
		// with the old file; an empty read is no "nothing written since".
		{name: "replaced by an empty file", before: ptr("INFO\n"), then: func(t *testing.T, path string) { appendTo("ERROR 503\n")(t, path); replace("")(t, path) }, wantErr: "another file was put in its place"},
		{name: "truncated to empty", before: ptr("INFO\n"), then: func(t *testing.T, path string) { appendTo("ERROR 503\n")(t, path); rewrite("")(t, path) }, wantErr: "truncated since the mark"},
		{name: "not noted, modified after", before: ptr("ERROR\n"), noMark: true, then: appendTo("INFO\n"), wantErr: "labrun did not note where it ended at the mark"},
		{name: "not noted, not modified after", before: ptr("ERROR\n"), noMark: true, old: true, want: ""},
		{name: "timestamps decide", before: ptr(stamp(-time.Second) + "GET 503 old\n"),
			then: appendTo(stamp(-time.Second) + "GET 503 logged late\n" + stamp(time.Second) + "GET 200 new\n"), want: stamp(time.Second) + "GET 200 new"},
		{name: "timestamps decide in a file rewritten", before: ptr(stamp(-time.Second) + "GET 503 old\n"),
			then: rewrite(stamp(time.Second) + "GET 200 new\n"), want: stamp(time.Second) + "GET 200 new"},
		{name: "a header before the first timestamp", before: ptr("# access log\n"),
			then: appendTo(stamp(time.Second) + "GET 200 new\n"), want: stamp(time.Second) + "GET 200 new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			if tc.before != nil {
				if err := os.WriteFile(path, []byte(*tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
				old := since.Add(-48 * time.Hour)
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			}
			tg := newTarget(t, nil, Options{Dir: dir})
			from := schema.LogSince{Time: since}
			if !tc.noMark {
				m, err := tg.Logs.(schema.FileMarker).MarkFile("app.log")
				if err != nil {
					t.Fatal(err)
				}
				from.File = &m
			}
			if tc.then != nil {
				tc.then(t, path)
			}
			if tc.old {
				old := since.Add(-47 * time.Hour)
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := bg()
			defer cancel()
			var got []string
			err := tg.Logs.Logs(ctx, schema.Logs{File: "app.log"}, from, func(l schema.LogLine) { got = append(got, l.Text) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("read %q, err %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("read %q, want %q", g, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

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
	if err := readLogFile(ctx, path, schema.LogSince{}, func(schema.LogLine) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n < 80000 {
		t.Errorf("%d lines, want at least the 80000 written before the read", n)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := readLogFile(ctx, path, schema.LogSince{}, func(schema.LogLine) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("read with an ended context: %v, want it to stop", err)
	}
}

// TestLogsFileNotRegular: a logs file that is not a regular file at the mark or when it is
// read (a FIFO, a device such as /dev/zero, a directory) is refused at once. A FIFO with no
// writer made the step's open block forever, past its timeout and every interrupt (labrun
// could only be killed with -9, with no cleanup and no report); /dev/zero, of size 0, read
// as a file that gained nothing, so "log.count == 0" passed.
func TestLogsFileNotRegular(t *testing.T) {
	since := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{name: "fifo", make: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "device", make: func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "directory", make: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, at := range []string{"mark", "read"} {
			t.Run(tc.name+" at the "+at, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "app.log")
				tg := newTarget(t, nil, Options{Dir: dir})
				from := schema.LogSince{Time: since}
				if at == "read" {
					if err := os.WriteFile(path, []byte("ERROR 503\n"), 0o644); err != nil {
						t.Fatal(err)
					}
					m, err := tg.Logs.(schema.FileMarker).MarkFile("app.log")
					if err != nil {
						t.Fatal(err)
					}
					from.File = &m
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
				tc.make(t, path)
				done := make(chan error, 1)
				go func() {
					if at == "mark" {
						_, err := tg.Logs.(schema.FileMarker).MarkFile("app.log")
						done <- err
						return
					}
					ctx, cancel := bg()
					defer cancel()
					done <- tg.Logs.Logs(ctx, schema.Logs{File: "app.log"}, from, func(schema.LogLine) {})
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), "not a regular file") {
						t.Errorf("err %v, want one saying it is not a regular file", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the step is still opening or reading the file after 5 s")
				}
			})
		}
	}
}
