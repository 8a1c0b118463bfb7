package envoy

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadStats checks that the streaming reader agrees with the whole-buffer functions,
// whatever the chunk boundaries.
func TestReadStats(t *testing.T) {
	big := genStats(30 << 20 / 10) // 3 MB: several 1 MiB chunks
	inputs := map[string][]byte{
		"istio":  readFixture(t, "stats_istio.txt"),
		"legacy": readFixture(t, "stats_legacy.txt"),
		"big":    big,
		"crlf":   bytes.ReplaceAll(big[:bytes.LastIndexByte(big[:1<<20+12345], '\n')+1], []byte("\n"), []byte("\r\n")),
	}
	readers := map[string]func([]byte) io.Reader{
		"plain":    func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"half":     func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	}
	clusters := []string{connLab, httpbin, "xds-grpc", "backend", "", "outbound|80||backend-0.ns-000.svc.cluster.local"}
	for in, text := range inputs {
		for rn, mk := range readers {
			if rn == "one byte" && len(text) > 1<<20 {
				continue // slow and no different
			}
			for _, c := range clusters {
				wantS, err := ClusterStats(text, c)
				if err != nil {
					t.Fatal(err)
				}
				wantH, err := ClusterHistograms(text, c)
				if err != nil {
					t.Fatal(err)
				}
				gotS, gotH, err := ReadStats(mk(text), c)
				if err != nil {
					t.Fatalf("%s %s %q: %v", in, rn, c, err)
				}
				if !maps.Equal(gotS, wantS) || !maps.Equal(gotH, wantH) {
					t.Errorf("%s %s %q: stats %d/%d histograms %d/%d", in, rn, c, len(gotS), len(wantS), len(gotH), len(wantH))
				}
			}
		}
	}
	if s, _, _ := ReadStats(bytes.NewReader(big), connLab); len(s) < 100 {
		t.Errorf("big dump: %d stats for %s", len(s), connLab)
	}
}

func TestReadStatsErrors(t *testing.T) {
	// A bad line past the first chunk is reported with its line number.
	big := genStats(3 << 20)
	lines := bytes.Count(big, []byte("\n"))
	bad := append(bytes.Clone(big), "cluster."+connLab+";.oops: x\n"...)
	_, _, err := ReadStats(bytes.NewReader(bad), connLab)
	if want := "line " + itoa(lines+1) + ":"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want %q", err, want)
	}
	if _, err := ClusterStats(bad, connLab); err == nil || !strings.Contains(err.Error(), "line "+itoa(lines+1)+":") {
		t.Errorf("ClusterStats: %v", err)
	}
	// A line longer than the buffer.
	long := "cluster.c;.a: 1\ncluster.c;.long_" + strings.Repeat("x", 3<<20) + ": 2\ncluster.c;.b: 3\n"
	s, _, err := ReadStats(strings.NewReader(long), "c")
	if err != nil || s["a"] != 1 || s["b"] != 3 || len(s) != 3 {
		t.Errorf("long line: %d stats, %v", len(s), err)
	}
	if _, _, err := ReadStats(strings.NewReader(`{"stats":[]}`), "c"); err == nil {
		t.Error("json: no error")
	}
	boom := errors.New("boom")
	if _, _, err := ReadStats(iotest.ErrReader(boom), "c"); !errors.Is(err, boom) {
		t.Errorf("reader error: %v", err)
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}
