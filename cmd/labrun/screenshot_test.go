package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSummaryScreenshots looks at what a sweep and a comparison write: it runs examples/sweep.cue
// (six combinations, three runs each; and five runs of one combination) and docs/experiments.md's
// sweep on the local target, and labrun diff --plot on the committed Kit B records, renders the
// HTML summary, its plots and the diff's picture to PNG with headless Chromium, and wants each
// picture non-trivial — large enough, neither blank nor one colour, and showing the colours
// the page draws (the PASSED badge's green, a plot line's blue, a bar's red).
// It skips without chromium unless LABRUN_E2E_ALL=1 (CI), where a missing browser fails it.
// LABRUN_UPDATE=1 copies the pictures to docs/images, where docs/experiments.md shows them.
func TestSummaryScreenshots(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep and a browser")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("LABRUN_E2E_ALL") == "1" {
			t.Fatalf("LABRUN_E2E_ALL=1 and no chromium on PATH: %v", err)
		}
		t.Skip("no chromium on PATH (LABRUN_E2E_ALL=1 makes this a failure)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	labrun := func(want int, args ...string) {
		t.Helper()
		out.Reset()
		p := newProcess()
		p.Args = args
		p.Stdout, p.Stderr, p.Cwd, p.IsTerminal, p.StderrWidth = &out, &out, root, false, nil
		p.Getenv = func(string) string { return "" }
		if code := Main(p); code != want {
			t.Fatalf("labrun %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out.String())
		}
	}
	// plotOf finds the plot titled title among a summary's.
	plotOf := func(glob, title string) string {
		t.Helper()
		plots, _ := filepath.Glob(filepath.Join(dir, glob))
		for _, f := range plots {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(">"+title+"<")) {
				return f
			}
		}
		t.Fatalf("no plot %q among %v", title, plots)
		return ""
	}
	labrun(exitOK, "run", "-q", "--count", "3", "--report-dir", dir, filepath.Join(root, "examples", "sweep.cue"))
	htmls, _ := filepath.Glob(filepath.Join(dir, "*_sweep_*.summary.html"))
	if len(htmls) != 1 {
		t.Fatalf("want one HTML summary in %s, found %v\n%s", dir, htmls, out.String())
	}
	// The plots docs/experiments.md shows: fortio.qps against connections (the scenario's
	// plot:), a line per request count, each run a point, a band over min–max; a strip plot
	// of --count without a sweep; and its own sweep's fortio.code503 against the 503 share.
	plot := plotOf("*_sweep_*.summary.plot-*.svg", "fortio.qps against connections")
	strip := filepath.Join(dir, "strip")
	labrun(exitOK, "run", "-q", "--count", "5", "--sweep", "requests=8", "--sweep", "connections=2", "--report-dir", strip, filepath.Join(root, "examples", "sweep.cue"))
	stripPlot := plotOf("strip/*_sweep_*.summary.plot-*.svg", "fortio.qps over 5 runs")
	labrun(exitOK, "run", "-q", "--report-dir", dir, filepath.Join(root, "docs", "experiments.md"))
	shed := plotOf("*_shed_sweep_*.summary.plot-*.svg", "fortio.code503 against share")
	// The picture of the Kit B comparison docs/experiments.md shows (labrun diff --plot of the
	// records TestE2EKitBDiff wrote).
	diffPlot := filepath.Join(dir, "kitb-diff.svg")
	labrun(exitFailed, "diff", "--tolerance", "0.1", "--plot", diffPlot, // exit 1: they differ
		filepath.Join(root, "docs", "records", "kitb-mode1_strict.json"), filepath.Join(root, "docs", "records", "kitb-mode1_logical.json"))
	svg, err := os.ReadFile(diffPlot)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^<svg [^>]*width="(\d+)" height="(\d+)"`).FindSubmatch(svg)
	if m == nil {
		t.Fatalf("%s: no width and height", diffPlot)
	}
	dw, _ := strconv.Atoi(string(m[1]))
	dh, _ := strconv.Atoi(string(m[2]))
	for _, c := range []struct {
		src, png string
		w, h     int
		colour   [3]uint8
		what     string
	}{
		{htmls[0], "sweep-summary.png", 1200, 2000, [3]uint8{0x2e, 0x7d, 0x32}, "the PASSED badge's green"},
		{plot, "sweep-plot.png", 560, 320, [3]uint8{0x1f, 0x77, 0xb4}, "the first line's blue"},
		{stripPlot, "strip-plot.png", 380, 280, [3]uint8{0x1f, 0x77, 0xb4}, "the median's blue"},
		{shed, "shed-sweep-plot.png", 560, 320, [3]uint8{0x1f, 0x77, 0xb4}, "the first line's blue"},
		{diffPlot, "kitb-diff.png", dw, dh, [3]uint8{0xd6, 0x27, 0x28}, "B's red bars"},
	} {
		t.Run(c.png, func(t *testing.T) {
			shot := filepath.Join(t.TempDir(), c.png)
			screenshot(t, chromium, c.src, shot, c.w, c.h)
			checkPicture(t, shot, c.w, c.h, c.colour, c.what)
			if os.Getenv("LABRUN_UPDATE") == "1" {
				b, err := os.ReadFile(shot)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "docs", "images", c.png), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// screenshot renders file src to png at w×h with headless Chromium (its own profile, no
// network: the page is self-contained).
func screenshot(t *testing.T, chromium, src, png string, w, h int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--disable-extensions", "--user-data-dir="+t.TempDir(),
		"--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "--screenshot="+png, "file://"+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot %s: %v\n%s", src, err, b)
	}
}

// checkPicture wants the PNG at path to be w×h, not blank (at least 2% of its pixels not
// background, many colours) and to hold the colour c somewhere.
func checkPicture(t *testing.T, path string, w, h int, c [3]uint8, what string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %d×%d, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	bg := rgb(img, b.Min.X, b.Min.Y)
	colours := map[[3]uint8]bool{}
	var ink, found int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			p := rgb(img, x, y)
			colours[p] = true
			if p != bg {
				ink++
			}
			if near(p, c) {
				found++
			}
		}
	}
	total := b.Dx() * b.Dy()
	if ink*50 < total {
		t.Errorf("%s is blank: %d of %d pixels differ from the background", path, ink, total)
	}
	if len(colours) < 16 {
		t.Errorf("%s has %d colours: not a rendered page", path, len(colours))
	}
	if found < 20 {
		t.Errorf("%s does not show %s (%d pixels)", path, what, found)
	}
}

func rgb(img image.Image, x, y int) [3]uint8 {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func near(a, b [3]uint8) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a[0], b[0]) < 12 && d(a[1], b[1]) < 12 && d(a[2], b[2]) < 12
}
