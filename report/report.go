// Package report writes a run's Record for people and machines: a Markdown report (timeline
// planned vs actual, snapshot tables, deltas, expectations with values), the complete JSON
// record, an artifacts folder with every raw input, SVG pictures (the timeline, and every
// series sampled with every), and JUnit XML.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"labrun.dev/labrun/interp"
)

// Files are the paths of what Write wrote.
type Files struct {
	Markdown  string
	JSON      string
	Artifacts string
	Timeline  string
	Series    []string
}

// Base returns the file name stem of a record's report: <UTC time>_<scenario>.
func Base(rec *interp.Record) string {
	return rec.Start.UTC().Format("20060102T150405Z") + "_" + safeName(rec.Scenario)
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string {
	s = unsafe.ReplaceAllString(s, "_")
	if s == "" {
		return "_"
	}
	return s
}

// Write writes the report of rec into dir (created if needed), named Base(rec).
func Write(dir string, rec *interp.Record) (Files, error) { return WriteAs(dir, Base(rec), rec) }

// WriteAs writes the report of rec into dir (created if needed) under the file name stem base:
// base.md, base.json and the folder base.
func WriteAs(dir, base string, rec *interp.Record) (Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, err
	}
	f := Files{
		Markdown:  filepath.Join(dir, base+".md"),
		JSON:      filepath.Join(dir, base+".json"),
		Artifacts: filepath.Join(dir, base),
	}
	if err := writeArtifacts(f.Artifacts, rec); err != nil {
		return f, err
	}
	if len(rec.Steps) > 0 {
		f.Timeline = filepath.Join(f.Artifacts, "timeline.svg")
		if err := os.WriteFile(f.Timeline, []byte(TimelineSVG(rec)), 0o644); err != nil {
			return f, err
		}
	}
	for _, name := range sortedKeys(rec.Series) {
		p := filepath.Join(f.Artifacts, "series-"+safeName(name)+".svg")
		if err := os.WriteFile(p, []byte(SeriesSVG(rec.Series[name])), 0o644); err != nil {
			return f, err
		}
		f.Series = append(f.Series, p)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return f, err
	}
	if err := os.WriteFile(f.JSON, append(b, '\n'), 0o644); err != nil {
		return f, err
	}
	if err := os.WriteFile(f.Markdown, []byte(Markdown(rec, f)), 0o644); err != nil {
		return f, err
	}
	return f, nil
}

// writeArtifacts saves every raw input under dir/<step>/<name>, setting each artifact's File.
func writeArtifacts(dir string, rec *interp.Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	seen := map[string]int{}
	for _, a := range rec.Artifacts {
		rel := filepath.Join(safeName(a.Step), safeName(a.Name))
		if n := seen[rel]; n > 0 {
			ext := filepath.Ext(rel)
			rel = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(rel, ext), n, ext)
		}
		seen[rel]++
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, a.Data, 0o644); err != nil {
			return err
		}
		a.File = rel
	}
	return nil
}

// Read reads a JSON record written by Write.
func Read(path string) (*interp.Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a labrun run record: %v", path, err)
	}
	if probe.Version != interp.RecordVersion {
		return nil, fmt.Errorf("%s: record version %d, this labrun reads version %d", path, probe.Version, interp.RecordVersion)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &rec, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%.3f s", d.Seconds())
}
