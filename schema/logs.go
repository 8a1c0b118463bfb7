package schema

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Logs is the logs step: log lines since a mark, with Istio access-log lines parsed.
type Logs struct {
	PodRef
	Process string `json:"process,omitempty"`
	File    string `json:"file,omitempty"`
	Since   string `json:"since,omitempty"`
	Match   string `json:"match,omitempty"`
	Capture string `json:"capture,omitempty"`
}

var logsKind = Kind{
	Usage:  "record log lines since a mark, parsing access logs",
	New:    func() Params { return new(Logs) },
	Result: ResultLogs,
}

// Check: one source; since names a step that has started; valid patterns.
func (p *Logs) Check(c Checker) {
	exactlyOneGroup(c, "logs", [][]string{{"pod", "selector"}, {"process"}, {"file"}})
	if p.Pod != "" && p.Selector != "" {
		c.Errorf("", "logs takes pod or selector, not both")
	}
	if (p.Process != "" || p.File != "") && (p.Container != "" || p.Namespace != "") {
		c.Errorf("", "container and namespace apply to a pod's logs, not to a process or a file")
	}
	if p.Process != "" {
		checkProcessRef(c, "process", p.Process, "logs")
	}
	if c.Has("file") && strings.TrimSpace(p.File) == "" {
		c.Errorf("file", "expected the path of a log file, got %q", p.File)
	}
	if p.Since != "" && !c.Templated("since") {
		kind, ok := c.Step(p.Since)
		switch {
		case !ok:
			c.Errorf("since", "logs since names %q, but no step has that name%s", p.Since, c.Suggest(p.Since))
		case !c.StartedBefore(p.Since):
			c.Errorf("since", "logs since names %q (%s step), which has not started when this step runs: name a step that comes earlier", p.Since, A(kind))
		}
	}
	checkRE(c, "match", p.Match)
	checkCapture(c, "capture", p.Capture, "; to keep lines, use match")
}

// CaptureGroups returns the named groups of the capture pattern.
func (p *Logs) CaptureGroups() []string { return groups(p.Capture) }

// exactlyOneGroup is ExactlyOne over groups of fields (any field of a group selects it).
func exactlyOneGroup(c Checker, kind string, groups [][]string) {
	var set, all []string
	for _, g := range groups {
		all = append(all, strings.Join(g, " or "))
		for _, f := range g {
			if c.Has(f) {
				set = append(set, f)
				break
			}
		}
	}
	if len(set) == 0 {
		c.Errorf("", "%s needs one of: %s", kind, strings.Join(all, "; "))
	} else if len(set) > 1 {
		c.Errorf("", "%s takes only one of: %s; got %s", kind, strings.Join(all, "; "), strings.Join(set, " and "))
	}
}

// Plan: one read.
func (p *Logs) Plan() Plan { return Plan{} }

// Needs pods for a container's logs, local processes for a process, this machine for a file.
func (p *Logs) Needs() Need {
	switch {
	case p.Process != "":
		return Need{CapProcesses, DriverLogs}
	case p.File != "":
		return Need{CapHost, DriverLogs}
	}
	return Need{CapPods, DriverLogs}
}

// Mutates nothing.
func (p *Logs) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the source.
func (p *Logs) Summary() string {
	switch {
	case p.Process != "":
		return "process " + p.Process
	case p.File != "":
		return "file " + p.File
	}
	return p.PodRef.String()
}

// Run reads the lines written since the mark, parses and records them.
func (p *Logs) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Process == "" && q.File == "" {
		q.Namespace = rt.Namespace(q.Namespace)
		if q.Container == "" {
			q.Container = "istio-proxy"
		}
	} else if q.File != "" {
		q.File = rt.File(q.File)
	}
	since := rt.RunStart()
	if q.Since != "" {
		t, ok := rt.Started(q.Since)
		if !ok {
			return fmt.Errorf("logs since %q: that step has not started", q.Since)
		}
		since = t
	}
	acc, err := newLogAccumulator(q.Match, q.Capture, rt.ParseAccessLog, OutputHead, OutputTail)
	if err != nil {
		return err
	}
	// Every line goes to the artifact as it is read; memory keeps a bounded head and tail.
	file := rt.ArtifactWriter("logs.txt")
	defer file.Close()
	raw := bufio.NewWriterSize(file, 64<<10)
	err = rt.Target().Logs.Logs(ctx, q, since, func(l LogLine) {
		raw.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " " + l.Text + "\n")
		acc.add(l)
	})
	if ferr := raw.Flush(); ferr != nil {
		rt.Warn(fmt.Sprintf("the log could not be saved whole: %v", ferr))
	}
	switch {
	case errors.Is(err, ErrLinesCut):
		acc.cut = true
	case err != nil:
		return err
	}
	rt.Record(acc.result())
	return nil
}

// logAccumulator parses log lines as they are read: every matching line counts (count, codes,
// flags, details); lines, entries and captures keep the first head and the last tail bytes'
// worth of lines.
type logAccumulator struct {
	match, capture *regexp.Regexp
	parse          func(string) (LogEntry, bool)
	res            LogResult
	head, tail     int
	headUsed       int
	tailKept       []LogEntry // oldest first, from tailStart on
	tailStart      int
	tailUsed       int
	firstCapture   map[string]string
	cut            bool
}

// entryCost is what a kept entry counts against the budgets: its text and a fixed overhead,
// so that a million empty lines are bounded too.
func entryCost(e LogEntry) int { return len(e.Line) + 64 }

func newLogAccumulator(match, capture string, parse func(string) (LogEntry, bool), head, tail int) (*logAccumulator, error) {
	a := &logAccumulator{parse: parse, head: head, tail: tail,
		res: LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}, Capture: map[string]string{}}}
	var err error
	if match != "" {
		if a.match, err = regexp.Compile(match); err != nil {
			return nil, fmt.Errorf("logs match: %v", err)
		}
	}
	if capture != "" {
		if a.capture, err = regexp.Compile(capture); err != nil {
			return nil, fmt.Errorf("logs capture: %v", err)
		}
	}
	return a, nil
}

// add takes one line: filtered by match, parsed, counted, kept while the budgets allow.
func (a *logAccumulator) add(l LogLine) {
	if a.match != nil && !a.match.MatchString(l.Text) {
		return
	}
	e, ok := a.parse(l.Text)
	if !ok {
		e = LogEntry{Line: l.Text}
	}
	e.Line = l.Text
	if e.Time == "" && !l.Time.IsZero() {
		e.Time = l.Time.UTC().Format(time.RFC3339Nano)
	}
	if e.Access {
		a.res.Codes[fmt.Sprint(int(e.Code))]++
		for _, f := range e.Flags {
			a.res.Flags[f]++
		}
		if e.Details != "" {
			a.res.Details[e.Details]++
		}
	}
	if a.capture != nil {
		if m := a.capture.FindStringSubmatch(l.Text); m != nil {
			caps := map[string]string{}
			for i, n := range a.capture.SubexpNames() {
				if n != "" {
					caps[n] = m[i]
				}
			}
			e.Captures = caps
			if a.firstCapture == nil {
				a.firstCapture = caps
			}
		}
	}
	a.res.Count++
	cost := entryCost(e)
	if a.headUsed+cost <= a.head && len(a.tailKept) == 0 {
		a.headUsed += cost
		a.res.Entries = append(a.res.Entries, e)
		return
	}
	a.tailKept = append(a.tailKept, e)
	a.tailUsed += cost
	for a.tailUsed > a.tail && a.tailStart < len(a.tailKept) {
		a.tailUsed -= entryCost(a.tailKept[a.tailStart])
		a.tailKept[a.tailStart] = LogEntry{}
		a.tailStart++
		a.cut = true
	}
	if a.tailStart > len(a.tailKept)/2 { // amortised: the dropped front is reclaimed
		a.tailKept = append(a.tailKept[:0], a.tailKept[a.tailStart:]...)
		a.tailStart = 0
	}
}

// result is what expressions see: the kept lines, head then tail.
func (a *logAccumulator) result() LogResult {
	res := a.res
	res.Entries = append(res.Entries, a.tailKept[a.tailStart:]...)
	res.Cut = a.cut
	for _, e := range res.Entries {
		res.Lines = append(res.Lines, e.Line)
		if e.Captures != nil {
			res.Captures = append(res.Captures, e.Captures)
		}
	}
	if a.firstCapture != nil {
		res.Capture = a.firstCapture
	}
	return res
}
