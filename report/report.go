// Package report writes a run's Record for people and machines: a Markdown report (timeline
// planned vs actual, snapshot tables, deltas, expectations with values), a self-contained HTML
// report with the charts (a chart per sampled stat, latency histograms, codes over time), the
// complete JSON record, an artifacts folder (one JSON-lines file per kind of raw input, and the
// streamed outputs — a command's, a log, a process's — as files of their own), and JUnit XML.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"labrun.dev/labrun/interp"
)

// Files are the paths of what Write wrote.
type Files struct {
	Markdown string
	JSON     string
	// HTML is the self-contained report (inline SVG, no network), the best way to look at a run.
	HTML string
	// Artifacts is the folder of raw inputs: one JSON-lines file per kind of artifact.
	Artifacts string
	// Timeline is the timeline picture the Markdown shows; the other charts are in the HTML.
	Timeline string
	// lines maps an artifact to its line in its JSON-lines file, for links.
	lines map[*interp.ArtifactRecord]int
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
	f.HTML = filepath.Join(dir, base+".html")
	timeline, err := writeEvidence(&f, rec)
	if err != nil {
		// No record: the artifacts (perhaps cut by a full disk) would be a part of a report
		// that has none, and keep the space the next run needs.
		os.RemoveAll(f.Artifacts)
		return f, err
	}
	// The page is built once and rendered twice.
	p := buildPageWith(rec, f, timeline)
	if err := WriteFile(f.Markdown, []byte(markdownPage(p, f))); err != nil {
		return f, err
	}
	if err := WriteFile(f.HTML, []byte(htmlPage(p))); err != nil {
		return f, err
	}
	return f, nil
}

// writeEvidence writes the artifacts, the timeline and the record of f; it returns the
// timeline's SVG.
func writeEvidence(f *Files, rec *interp.Record) (string, error) {
	lines, err := writeArtifacts(f.Artifacts, rec)
	if err != nil {
		return "", err
	}
	f.lines = lines
	var timeline string
	if len(rec.Steps) > 0 {
		timeline = TimelineSVG(rec)
		f.Timeline = filepath.Join(f.Artifacts, "timeline.svg")
		if err := WriteFile(f.Timeline, []byte(timeline)); err != nil {
			return "", err
		}
	}
	if err := WriteWith(f.JSON, func(w io.Writer) error { return encodeRecord(w, rec) }); err != nil {
		return "", err
	}
	// The seal last: the record and every file of its folder are written (the pages, outside
	// the folder, are made from the record and are not sealed).
	if err := writeSeal(*f); err != nil {
		return "", err
	}
	return timeline, nil
}

// encodeRecord writes rec as indented JSON, as json.MarshalIndent(rec, "", "  ") would, one
// step and one result at a time: a long run's record (10,000 snapshots, 14 MB) is never whole
// in memory as JSON.
func encodeRecord(w io.Writer, rec *interp.Record) error {
	shallow := *rec
	shallow.Steps, shallow.Results = nil, nil
	head, err := json.MarshalIndent(&shallow, "", "  ")
	if err != nil {
		return err
	}
	const stepsField, resultsField = "\n  \"steps\": null,", "\n  \"results\": null,"
	i, j := bytes.Index(head, []byte(stepsField)), bytes.Index(head, []byte(resultsField))
	if i < 0 || j < i {
		return errors.New("record: steps and results not where expected")
	}
	bw := &errWriter{w: w}
	// Each step and result is encoded in one buffer, reused: MarshalIndent made two new copies
	// of each (a long run's 10,000 snapshots: ~44 MB of garbage, while its heap is at its
	// largest).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("    ", "  ")
	indented := func(v any) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil // Encode ends each value with a newline
	}
	bw.write(head[:i])
	bw.write([]byte("\n  \"steps\": "))
	if rec.Steps == nil {
		bw.write([]byte("null"))
	} else {
		bw.write([]byte("["))
		for k, st := range rec.Steps {
			b, err := indented(st)
			if err != nil {
				return err
			}
			if k > 0 {
				bw.write([]byte(","))
			}
			bw.write([]byte("\n    "))
			bw.write(b)
		}
		if len(rec.Steps) > 0 {
			bw.write([]byte("\n  "))
		}
		bw.write([]byte("]"))
	}
	bw.write(head[i+len(stepsField)-1 : j])
	bw.write([]byte("\n  \"results\": "))
	if rec.Results == nil {
		bw.write([]byte("null"))
	} else {
		bw.write([]byte("{"))
		for k, name := range sortedKeys(rec.Results) {
			key, err := json.Marshal(name)
			if err != nil {
				return err
			}
			b, err := indented(rec.Results[name])
			if interp.IsNonFinite(err) {
				b, err = indented(rec.Results[name].WithFiniteJSON())
			}
			if err != nil {
				return err
			}
			if k > 0 {
				bw.write([]byte(","))
			}
			bw.write([]byte("\n    "))
			bw.write(key)
			bw.write([]byte(": "))
			bw.write(b)
		}
		if len(rec.Results) > 0 {
			bw.write([]byte("\n  "))
		}
		bw.write([]byte("}"))
	}
	bw.write(head[j+len(resultsField)-1:])
	bw.write([]byte("\n"))
	return bw.err
}

// errWriter keeps the first error of its writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// maxArtifactFiles bounds the artifact files of a report: a run of 10,000 steps must not
// write 10,000 files. Kinds beyond the first ones (by count) share other.jsonl.
const maxArtifactFiles = 5

var samplePrefix = regexp.MustCompile(`^[0-9]{4}-`)

// artifactKind is the file an artifact goes to: its name without a sample's "0001-" prefix.
func artifactKind(name string) string {
	return safeName(samplePrefix.ReplaceAllString(name, ""))
}

// artifactLine is one line of an artifact file.
type artifactLine struct {
	Step string `json:"step"`
	Name string `json:"name"`
	// Text is the artifact when it is UTF-8 text, Base64 otherwise.
	Text   *string `json:"text,omitempty"`
	Base64 []byte  `json:"base64,omitempty"`
}

// writeArtifacts saves every raw input in dir/<kind>.jsonl, one JSON line per artifact
// ({"step", "name", "text"}), setting each artifact's File; it returns each artifact's line.
func writeArtifacts(dir string, rec *interp.Record) (map[*interp.ArtifactRecord]int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, a := range rec.Artifacts {
		count[artifactKind(a.Name)]++
	}
	kinds := sortedKeys(count)
	sort.SliceStable(kinds, func(i, j int) bool { return count[kinds[i]] > count[kinds[j]] })
	file := map[string]string{}
	for i, k := range kinds {
		if i < maxArtifactFiles || len(kinds) == maxArtifactFiles+1 {
			file[k] = k + ".jsonl"
		} else {
			file[k] = "other.jsonl"
		}
	}
	bufs := map[string]*strings.Builder{}
	lineNo := map[string]int{}
	lines := map[*interp.ArtifactRecord]int{}
	taken := map[string]bool{}
	for _, a := range rec.Artifacts {
		if a.Path != "" {
			// Streamed (a command's output, a log): a file of its own, moved, never read.
			name := uniqueName(taken, safeName(a.Step)+"-"+safeName(a.Name))
			if err := moveFile(a.Path, filepath.Join(dir, name)); err != nil {
				return nil, err
			}
			a.Path, a.File = "", name
			continue
		}
		name := file[artifactKind(a.Name)]
		l := artifactLine{Step: a.Step, Name: a.Name}
		if utf8.Valid(a.Data) {
			t := string(a.Data)
			l.Text = &t
		} else {
			l.Base64 = a.Data
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		if bufs[name] == nil {
			bufs[name] = &strings.Builder{}
		}
		bufs[name].Write(b)
		bufs[name].WriteByte('\n')
		lineNo[name]++
		a.File = name
		lines[a] = lineNo[name]
	}
	for name, b := range bufs {
		if err := WriteFile(filepath.Join(dir, name), []byte(b.String())); err != nil {
			return nil, err
		}
	}
	return lines, nil
}

// uniqueName returns name, or name with a number before its extension, not in taken.
func uniqueName(taken map[string]bool, name string) string {
	out := name
	ext := filepath.Ext(name)
	for i := 2; taken[out] || strings.HasSuffix(out, ".jsonl"); i++ {
		out = fmt.Sprintf("%s-%d%s", strings.TrimSuffix(name, ext), i, ext)
	}
	taken[out] = true
	return out
}

// moveFile renames from to to, or copies it (through a temporary name) when they are on
// different file systems.
func moveFile(from, to string) error {
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := WriteWith(to, func(w io.Writer) error { _, err := io.Copy(w, f); return err }); err != nil {
		return err
	}
	return os.Remove(from)
}

// Read reads a JSON record written by Write.
//
// A record of version 1 (one section per kind of result) is read into the current form: its
// results keep their kinds, taken from the steps that recorded them.
func Read(path string) (*interp.Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(path, b)
}

// Decode reads a record from b, the contents of path (or where b came from: a line of a pod's
// log), as Read does.
func Decode(path string, b []byte) (*interp.Record, error) {
	if kind := Sniff(path, b); kind != KindRecord {
		return nil, kindError(path, kind)
	}
	var probe struct {
		Version int             `json:"version"`
		Results json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: not a labrun run record: %v", path, err)
	}
	if probe.Version < 1 || probe.Version > interp.RecordVersion {
		return nil, fmt.Errorf("%s: record version %d, this labrun reads versions 1 to %d", path, probe.Version, interp.RecordVersion)
	}
	if probe.Version == 1 && probe.Results != nil {
		// Version 2 keeps its results under results, version 1 by kind: a record of version 2
		// or later whose version was lowered to 1, to be held to fewer checks
		// (interp.Record.versionContradictions says the rest).
		return nil, fmt.Errorf("%s: it says it is of version 1, but it keeps its results under results, which records keep since version 2 (version 1 kept them by kind: snapshots, loads, …): its version was lowered after the run (a record of an older version is held to fewer checks); the record was changed after the run or is corrupt", path)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	rec.RereadLogs()
	if cs := rec.ClockAbsences(); len(cs) > 0 {
		return nil, fmt.Errorf("%s: %s; the record was changed after the run or is corrupt", path, strings.Join(cs, "; "))
	}
	if err := rec.Contradictions(); err != nil {
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

// ArtifactsDir is the artifacts folder of the record at path, as WriteAs names it: the
// record's file name without its .json (a record copied with its folder, under another name,
// keeps the pair).
func ArtifactsDir(path string) string { return strings.TrimSuffix(path, ".json") }

// UnlistedArtifacts are the artifacts the folder beside a record (dir, ArtifactsDir) holds that
// the record does not list: a file no artifact of rec names, or a line of a JSON-lines file
// beyond those its artifacts of that step and name take. Every file labrun writes there is an
// artifact the record lists, but the timeline picture. The artifact checks read only what the
// record lists: before, a record edited into a pass with the entry of the artifact that says
// otherwise taken out of its list (the file left beside it) replayed PASSED. None when the
// folder is not there.
func UnlistedArtifacts(dir string, rec *interp.Record) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	listed := map[string]map[[2]string]int{}
	for _, a := range rec.Artifacts {
		if a == nil || a.File == "" {
			continue
		}
		if listed[a.File] == nil {
			listed[a.File] = map[[2]string]int{}
		}
		listed[a.File][[2]string{a.Step, a.Name}]++
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "timeline.svg" || name == SealFile {
			continue
		}
		have, ok := listed[name]
		if !ok {
			out = append(out, name)
			continue
		}
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		for _, l := range readArtifactLines(filepath.Join(dir, name)) {
			k := [2]string{l.Step, l.Name}
			if have[k] == 0 {
				out = append(out, fmt.Sprintf("%s of step %s (in %s)", l.Name, l.Step, name))
				continue
			}
			have[k]--
		}
	}
	return out
}

// ReadArtifacts reads the artifacts rec lists (their File) from dir, the folder written beside
// the record (ArtifactsDir): the data of each artifact found, by artifact. An artifact of a
// JSON-lines file is its n-th line of that step and name, n as rec lists them (writeArtifacts
// writes them in that order). An artifact that is not there (its folder or file removed, a
// record read from a pod's log) is left out, as is one whose line does not name its step and
// name: what they held cannot be known.
func ReadArtifacts(dir string, rec *interp.Record) map[*interp.ArtifactRecord][]byte {
	out := map[*interp.ArtifactRecord][]byte{}
	jsonl := map[string][]artifactLine{}
	at := map[string]int{}
	for _, a := range rec.Artifacts {
		if a == nil || a.File == "" || a.File != filepath.Base(a.File) || a.File == "." || a.File == ".." {
			continue // a File that leaves the folder is none of its artifacts
		}
		path := filepath.Join(dir, a.File)
		if !strings.HasSuffix(a.File, ".jsonl") {
			if b, err := os.ReadFile(path); err == nil {
				out[a] = b
			}
			continue
		}
		lines, ok := jsonl[a.File]
		if !ok {
			lines = readArtifactLines(path)
			jsonl[a.File] = lines
		}
		i := at[a.File]
		at[a.File]++
		if i >= len(lines) || lines[i].Step != a.Step || lines[i].Name != a.Name {
			continue
		}
		switch l := lines[i]; {
		case l.Text != nil:
			out[a] = []byte(*l.Text)
		case l.Base64 != nil:
			out[a] = l.Base64
		default:
			out[a] = []byte{}
		}
	}
	return out
}

// MissingArtifacts says which artifacts rec lists that data, what ReadArtifacts read from the
// folder beside its JSON file, does not hold (a file gone, or its line in a JSON-lines file).
// A record whose folder is there but lacks an artifact it lists lost it after the run: before,
// an edit of a load's latencies with its fortio.json.jsonl deleted replayed PASSED, exit 0,
// where the same edit with the file there was refused.
func MissingArtifacts(rec *interp.Record, data map[*interp.ArtifactRecord][]byte) []string {
	var missing []string
	for _, a := range rec.Artifacts {
		if a == nil || a.File == "" || a.File != filepath.Base(a.File) || a.File == "." || a.File == ".." {
			continue
		}
		if _, ok := data[a]; !ok {
			missing = append(missing, fmt.Sprintf("%s of step %s (in %s)", a.Name, a.Step, a.File))
		}
	}
	return missing
}

// readArtifactLines reads a JSON-lines artifact file; nil when it cannot be read. A line that
// is not an artifact line reads as an empty one (its step and name match no artifact).
func readArtifactLines(path string) []artifactLine {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []artifactLine
	for line := range bytes.Lines(b) {
		var l artifactLine
		if json.Unmarshal(line, &l) != nil {
			l = artifactLine{}
		}
		out = append(out, l)
	}
	return out
}
