package schema

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Logs is the logs step: log lines since a mark, with access-log lines parsed.
type Logs struct {
	PodRef
	Process string `json:"process,omitempty"`
	File    string `json:"file,omitempty"`
	Since   string `json:"since,omitempty"`
	Match   string `json:"match,omitempty"`
	Capture string `json:"capture,omitempty"`
}

var logsKind = Kind{
	Usage: "record log lines since a mark, parsing access logs",
	New:   func() Params { return new(Logs) },
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

// MarkedFile is the local file the step reads and the step whose start is its mark ("": the
// run's start): the interpreter notes where the file ends then (see FileMark).
func (p *Logs) MarkedFile() (file, since string, ok bool) { return p.File, p.Since, p.File != "" }

// MarkedPods is the pod or selector the step reads and the step whose start is its mark
// ("": the run's start): the interpreter notes the pods they name then (see PodMark).
func (p *Logs) MarkedPods() (ref PodRef, since string, ok bool) {
	return p.PodRef, p.Since, p.Process == "" && p.File == "" && (p.Pod != "" || p.Selector != "")
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

// DroppedWhy is the warning of a logs step that lines of its window were dropped before it
// read them (ErrLinesCut), and its result's Dropped.
const DroppedWhy = "lines written since the mark were dropped before this step read them (the process wrote more than labrun keeps of its output: its first and last MiB of lines; the whole is in the process step's output.txt), so its count, codes, flags, details and capture are of the lines kept only"

// MissedWarning and MissedWarningEnd frame the warning of a logs step whose read may have
// missed pods (LogResult.Missed between them): a record's missed is held to it.
const (
	MissedWarning    = "the read may have missed pods: "
	MissedWarningEnd = "; its lines, counts and entries have no value for a claim"
)

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
	from := LogSince{Time: since}
	if q.File != "" {
		from.File = rt.FileMark(q.Since, q.File)
	}
	// missed is why the pods read may not be every pod the read names since its mark ("":
	// they are): the result's lines then have no value (LogResult.NoValue), as "no 503 since
	// the mark" would hold of the pods read and pass over one that was not.
	missed := ""
	if _, ok := rt.Target().Logs.(PodMarker); ok && q.Process == "" && q.File == "" {
		from.Pods = rt.PodMark(q.Since, q.PodRef)
		switch {
		case from.Pods == nil:
			missed = "the pods it names were not noted at its mark, so a pod deleted or replaced since, whose lines since the mark cannot be read, would go unseen"
		case from.Pods.Err != "":
			missed = "the pods it names could not be noted at its mark (" + from.Pods.Err + "), so a pod deleted or replaced since, whose lines since the mark cannot be read, would go unseen"
		case from.Pods.Since != nil && from.Pods.Since.Lost() != "":
			missed = "the pods its selector matches could not be followed since its mark (" + from.Pods.Since.Lost() + "), so a pod that came and was deleted since, whose lines cannot be read, would go unseen"
		}
		if missed != "" {
			rt.Warn(MissedWarning + missed + MissedWarningEnd)
		}
	}
	// A selector reads every pod it matches (as kubectl logs -l does): the record names them,
	// and the artifact's lines say whose they are when there are several.
	var pods []string
	from.Sources = func(p []string) { pods = slices.Clone(p) }
	long := 0 // lines of MaxLine bytes or more: read in pieces of MaxLine
	err = rt.Target().Logs.Logs(ctx, q, from, func(l LogLine) {
		prefix := ""
		if len(pods) > 1 {
			prefix = "[pod/" + l.Pod + "] "
		}
		raw.WriteString(l.Time.UTC().Format(time.RFC3339Nano) + " " + prefix + l.Text + "\n")
		if len(l.Text) >= MaxLine {
			long++
		}
		acc.add(l)
	})
	if ferr := raw.Flush(); ferr != nil {
		rt.Warn(fmt.Sprintf("the log could not be saved whole: %v", ferr))
	}
	dropped := ""
	switch {
	case errors.Is(err, ErrLinesCut):
		acc.cut = true
		dropped = DroppedWhy
		rt.Warn(DroppedWhy)
	case err != nil:
		return err
	}
	if long > 0 && (q.Match != "" || q.Capture != "") {
		// A match or capture across the edge of two pieces is not seen: a count of 0 would
		// say "no such line" of a line that has it.
		return fmt.Errorf("a line of 1 MiB or more was read in pieces of 1 MiB (%d such pieces; the whole log is in the step's logs.txt): match and capture test each piece alone, so a line they would match across a piece's edge would go uncounted; have the program write shorter lines, or judge the file with an exec (grep -c)", long)
	}
	res := acc.result()
	res.Pods = pods
	res.Missed = missed
	res.Dropped = dropped
	rt.Record(res)
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
	e.Pod = l.Pod
	if e.Time == "" && !l.Time.IsZero() {
		e.Time = l.Time.UTC().Format(time.RFC3339Nano)
	}
	if e.Access {
		a.res.countLine(e, 1)
	}
	if a.capture != nil {
		if caps := CaptureMatch(a.capture, l.Text); caps != nil {
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

// notAccessWhy is the error of a request field read from an entry that is not an access line.
const notAccessWhy = "an entry whose line is not an access line (its access is false) has no {field}; filter(<step>.entries, .access) keeps the lines that are"

// Result: the lines, their parsed access-log entries, counts by code, flag and details, and
// the named groups of the capture pattern.
func (p *Logs) Result(c ResultContext) *Type {
	// A line that is not an access line has no request fields: read, they are an error,
	// not the zero value (code 0 would pass code != 503 for a line with no code at all).
	access := func(f *Field) *Field {
		f.OnlyIf = "access"
		f.OnlyIfWhy = notAccessWhy
		return f
	}
	capture := captureMap(c, p.Capture)
	entry := StructOf(reflect.TypeFor[LogEntry](),
		F("line", StringType, "the line as written"),
		F("time", StringType, "its time, RFC 3339"),
		F("access", BoolType, "it is an access-log line in Istio's text or JSON format or Envoy's default (the fields below are parsed; one its format does not give is an error to read: Envoy's default has no details, termination, failure nor cluster, a JSON format none whose key it leaves out)"),
		F("format", StrForm("\"istio\", \"envoy\" or \"json\", or \"\" for none", FormLogFormat), "the access-log format the line was read in: \"istio\" (Istio's text format), \"envoy\" (Envoy's default) or \"json\"; \"\" for a line that is not an access line"),
		access(F("method", StrForm("e.g. \"GET\", or \"\" for none", FormMethod), "the request's method")),
		access(F("path", StrForm("e.g. \"/echo?delay=200ms\", or \"\" for none", FormPath), "the request's path")),
		access(F("protocol", StrForm("HTTP/1.0, HTTP/1.1, HTTP/2 or HTTP/3, or \"\" for none", FormProtocol), "the request's protocol")),
		access(F("code", Num(Plain), "the response code (0: none was sent; a JSON line's null has no value, an error to read, and counts under no code)")),
		access(F("flags", ListOf(StrForm("a response flag such as \"UF\"", FormResponseFlag)), "the response flags, e.g. [\"UF\", \"URX\"]")),
		access(F("details", StringType, "the response code details")),
		access(F("termination", StringType, "the connection termination details")),
		access(F("failure", StringType, "the upstream transport failure reason")),
		access(F("duration", Num(Millis), "the request's duration; where Envoy wrote \"-\" (or, in JSON, null) it has no value, an error to read, not 0")),
		access(F("upstream_host", StrForm("ip:port, e.g. \"10.244.1.5:8080\", or \"\" for none", FormUpstreamHost), "the upstream host, ip:port")),
		access(F("cluster", StringType, "the upstream cluster")),
		F("captures", capture, "the named groups of the capture pattern in this line; empty where the line did not match it, and a group read there is an error (saying so), unless it is read only where has(.captures, \"group\") holds"),
		F("pod", StringType, "the pod whose log holds the line (a selector reads every pod it matches); \"\" for a process's or a file's log"),
	)
	byCount := func(key string) *Type { return MapOf(Str(key), Num(Count)) }
	// Of a log longer than labrun keeps, the lines kept are its first and last: a claim over
	// them (all(log.entries, .code != 503)) would be judged over part of the log.
	whole := func(f *Field) *Field {
		f.OnlyIf = "!cut"
		f.OnlyIfWhy = "the log was longer than labrun keeps (its first and last lines; the whole is in the run's artifacts), so a claim over its {field} would be judged over part of it: count, codes, flags and details count every line"
		return f
	}
	t := StructOf(reflect.TypeFor[LogResult](),
		whole(F("lines", ListOf(StringType), "the lines that matched")),
		F("count", Num(Count), "how many lines matched"),
		whole(F("entries", ListOf(entry), "each line, parsed")),
		F("codes", MapOf(StrForm("a response code such as \"503\" (\"0\": no response began)", FormLogStatus), Num(Count)), "access-log lines by response code"),
		F("flags", MapOf(StrForm("a response flag such as \"UF\" (\"-\": none)", FormResponseFlag), Num(Count)), "access-log lines by response flag (a line with \"URX,UF\" counts for both)"),
		F("details", byCount("a response code details text"), "access-log lines by response code details"),
		whole(F("captures", ListOf(capture), "the named groups of every line the capture pattern matched")),
		whole(F("capture", capture, "the named groups of the first match; when no line matched, a group has no value: an expression that reads it errors (saying so), unless it reads it only where has(<name>.capture, \"group\") holds; compared whole (== or !=), it has no value either; where lines that matched captured different values of it, it has no one value and reading it errors (say which line: captures[0], all(), any())")),
		F("cut", BoolType, "lines, entries and captures hold only the first and the last lines; count, codes, flags and details count every line"),
		F("pods", ListOf(StringType), "the pods whose logs were read, by name: the one named, or every pod the selector matched whose container had started (its lines merged in time order); empty for a process's or a file's log"),
	)
	if c.Sampled() {
		return t.Every(PerSample)
	}
	return t
}

// Mutants: no lines, every line another code, every line another response flag, nothing
// captured.
func (p *Logs) Mutants(recorded any) []Mutant {
	rec, ok := recorded.(LogResult)
	if !ok {
		return nil
	}
	ms := []Mutant{
		{Name: "no log lines", Apply: func(v any) any {
			l := v.(LogResult)
			l.Lines, l.Entries, l.Captures = nil, nil, nil
			l.Count = 0
			l.Codes, l.Flags, l.Details, l.Capture = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]string{}
			return l
		}},
		{Name: "every line another code", Apply: func(v any) any {
			l := v.(LogResult)
			codes := map[string]float64{}
			for c, n := range l.Codes {
				codes[otherCode(c)] += n
			}
			l.Codes = codes
			for i := range l.Entries {
				if l.Entries[i].Access {
					if l.Entries[i].Code == 200 {
						l.Entries[i].Code = 503
					} else {
						l.Entries[i].Code = 200
					}
				}
			}
			return l
		}},
	}
	if rec.HasAccessLines() { // debug or application lines carry no response flag
		ms = append(ms, Mutant{Name: "every line another response flag", Apply: func(v any) any {
			l := v.(LogResult)
			n := 0.0
			for _, v := range l.Flags {
				n += v
			}
			flags := map[string]float64{}
			if len(l.Flags) == 0 || (len(l.Flags) == 1 && l.Flags["-"] > 0) {
				flags["UF"] = max(n, l.Count)
			} else {
				flags["-"] = n
			}
			l.Flags = flags
			for i := range l.Entries {
				if slices.Contains(l.Entries[i].Flags, "-") || len(l.Entries[i].Flags) == 0 {
					l.Entries[i].Flags = []string{"UF"}
				} else {
					l.Entries[i].Flags = []string{"-"}
				}
			}
			return l
		}})
	}
	return append(ms, Mutant{Name: "nothing captured", Apply: func(v any) any {
		l := v.(LogResult)
		l.Capture, l.Captures = map[string]string{}, nil
		l.Entries = slices.Clone(l.Entries)
		for i := range l.Entries {
			l.Entries[i].Captures = nil // as the lines' own: a run records them together
		}
		return l
	}})
}

// HasAccessLines says whether the result holds access-log lines (which have response flags).
func (l LogResult) HasAccessLines() bool {
	if len(l.Flags) > 0 || len(l.Codes) > 0 {
		return true
	}
	for _, e := range l.Entries {
		if e.Access {
			return true
		}
	}
	return false
}

// NoValue says why field of l has no value, or "": codes, flags and details count access
// lines, so where no line matched, or lines matched and none parsed as one (another format,
// or no access log), they would read as "no 503, no UF" of lines that say nothing of either.
func (l LogResult) NoValue(field string) string {
	if l.Dropped != "" && field != "pods" {
		return l.Dropped + "; judged on the lines kept, a claim over every line (<step>.count == 0, no 503) would pass over a line dropped. Have the process write less, or judge its whole output (the process step's output.txt) with an exec (grep -c)"
	}
	if l.Missed != "" && field != "pods" {
		return "the read may have missed pods: " + l.Missed + "; judged on the lines of the pods it read, a claim that every line is so (<step>.count == 0, no 503) would pass over the lines of one it missed. Mark at a step the pods are stable by (since:), or read again"
	}
	if field != "codes" && field != "flags" && field != "details" {
		return ""
	}
	if n := l.Untold[untoldField[field]]; n > 0 {
		// Access lines whose format does not give the field (Envoy's default format has no
		// details; a JSON format may leave out response_flags) are not counted there: a
		// claim about the counts would hold of lines that say nothing of it.
		lines := "1 access line is"
		if n != 1 {
			lines = num(n) + " access lines are"
		}
		return fmt.Sprintf("%s in a format that does not give its %s (Envoy's default format has no response code details; a JSON format may leave a key out, or write null for it), so %s counts none of them, and a claim about it would hold of lines that say nothing of it; read the entries of lines in a format that gives it (filter(<step>.entries, .format == \"istio\"))",
			lines, untoldField[field], field)
	}
	if l.HasAccessLines() {
		return ""
	}
	if l.Count == 0 {
		// An empty log (a file nothing wrote, a logger not configured) counts no 503: a
		// claim about its codes held of nothing, beside a load that got 503s.
		return "no line matched since the mark, so it counts none by code, flag or details: a claim about them would hold of nothing (<step>.count == 0 says that nothing was logged)"
	}
	lines := "1 line matched, and it did not parse"
	if l.Count != 1 {
		lines = fmt.Sprintf("%s lines matched, none parsed", num(l.Count))
	}
	msg := lines + " as an access line (Istio's text or JSON format, or Envoy's default), so it counts none by code, flag or details"
	if len(l.Lines) > 0 {
		first := l.Lines[0]
		if len(first) > 160 {
			first = first[:160] + "…"
		}
		msg += fmt.Sprintf("; the first: %q", first)
	}
	return msg
}

func otherCode(c string) string {
	if c == "200" {
		return "503"
	}
	return "200"
}

// LogEntry is one log line; for an Istio access-log line, its parsed fields.
type LogEntry struct {
	Line         string            `expr:"line" json:"line"`
	Time         string            `expr:"time" json:"time,omitempty"`
	Access       bool              `expr:"access" json:"access"`
	Method       string            `expr:"method" json:"method,omitempty"`
	Path         string            `expr:"path" json:"path,omitempty"`
	Protocol     string            `expr:"protocol" json:"protocol,omitempty"`
	Code         float64           `expr:"code" json:"code,omitempty"`
	Flags        []string          `expr:"flags" json:"flags,omitempty"`
	Details      string            `expr:"details" json:"details,omitempty"`
	Termination  string            `expr:"termination" json:"termination,omitempty"`
	Failure      string            `expr:"failure" json:"failure,omitempty"`
	DurationMS   float64           `expr:"duration" json:"duration,omitempty"`
	UpstreamHost string            `expr:"upstream_host" json:"upstream_host,omitempty"`
	Cluster      string            `expr:"cluster" json:"cluster,omitempty"`
	Captures     map[string]string `expr:"captures" json:"captures,omitempty"`
	// Format is the access-log format the line was read in: "istio" (Istio's text format),
	// "envoy" (Envoy's default) or "json"; "" of a line that is not an access line, and of a
	// record made before labrun said.
	Format string `expr:"format" json:"format,omitempty"`
	// Lacks are the fields of the entry (by their expr names) that the line's format does
	// not give: Envoy's default format has no details, termination, failure nor cluster; a
	// JSON format, no field whose key it leaves out; a line of Istio's text format whose end
	// is not Istio's (a custom format, a cut line), no upstream_host nor cluster. Read, such
	// a field is an error (LacksField), not the "" that a none() or a != would hold of.
	Lacks []string `expr:"-" json:"lacks,omitempty"`
	// Unset are the numeric fields of the entry (code, duration) its line gives no value:
	// Envoy wrote "-" (or, in JSON, null or "-") for a value it did not have. Read, such a
	// field is an error (LacksField), not the 0 that < or == 0 would hold of.
	Unset []string `expr:"-" json:"unset,omitempty"`
	// Pod is the pod whose log holds the line, of a read by selector ("" of a record made
	// before labrun read every pod a selector matches, and of a process's or a file's log).
	Pod string `expr:"pod" json:"pod,omitempty"`
}

// lacksWhy says, by format, why a line of that format does not give a field; {field} is the
// field's name, {op} the operator that writes it, {key} its key in Istio's JSON format.
var lacksWhy = map[string]string{
	"envoy": "this line is in Envoy's default access-log format (a proxy without Istio's mesh config: a plain Envoy, a gateway), which does not give the {field} ({op}), so reading it as \"\" would say nothing of the line; read it only of lines in Istio's format (filter(<step>.entries, .format != \"envoy\")), or have the proxy log in Istio's format",
	"json":  "this line is a JSON access-log line without the key \"{key}\": its format does not give the {field} ({op}), so reading it as \"\" would say nothing of the line; add \"{key}\": \"{op}\" to the format (meshConfig.accessLogFormat, a Telemetry provider's labels)",
	"istio": "this line is in Istio's text access-log format up to %DURATION%, but its end is not Istio's (\"%UPSTREAM_HOST%\" and six unquoted fields after it, %UPSTREAM_CLUSTER% first): a custom format or a cut line, so labrun cannot tell which of its fields is the {field} ({op}); read the line itself (.line contains …), or log in Istio's format",
}

// lacksOp names the operator that writes each field of an access line, and its key in
// Istio's JSON format.
var lacksOp = map[string][2]string{
	"method":        {"%REQ(:METHOD)%", "method"},
	"path":          {"%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%", "path"},
	"protocol":      {"%PROTOCOL%", "protocol"},
	"code":          {"%RESPONSE_CODE%", "response_code"},
	"flags":         {"%RESPONSE_FLAGS%", "response_flags"},
	"details":       {"%RESPONSE_CODE_DETAILS%", "response_code_details"},
	"termination":   {"%CONNECTION_TERMINATION_DETAILS%", "connection_termination_details"},
	"failure":       {"%UPSTREAM_TRANSPORT_FAILURE_REASON%", "upstream_transport_failure_reason"},
	"duration":      {"%DURATION%", "duration"},
	"upstream_host": {"%UPSTREAM_HOST%", "upstream_host"},
	"cluster":       {"%UPSTREAM_CLUSTER%", "upstream_cluster"},
}

// AccessLogOp is the operator that writes an access-log entry's field in a text format, and
// its key in Istio's JSON format ("cluster": %UPSTREAM_CLUSTER%, upstream_cluster); ok false
// for a field no operator writes.
func AccessLogOp(field string) (op, key string, ok bool) {
	o, ok := lacksOp[field]
	return o[0], o[1], ok
}

// LacksField is the error of reading field of e where e's format does not give it (Lacks),
// or nil.
func (e LogEntry) LacksField(field string) error {
	if !slices.Contains(e.Lacks, field) {
		if slices.Contains(e.Unset, field) {
			return e.unsetField(field)
		}
		return nil
	}
	why, ok := lacksWhy[e.Format]
	if e.Format == "envoy" && field == "upstream_host" {
		// The default format gives it; this line's end is not the default's.
		why = "this line is in Envoy's default access-log format up to %DURATION%, but its end is not the default's (\"%UPSTREAM_HOST%\" last, an address): a custom format, so labrun cannot tell which of its fields is the {field} ({op}); read the line itself (.line contains …)"
	} else if !ok {
		why = "this line's format does not give the {field}"
	}
	op := lacksOp[field]
	why = strings.NewReplacer("{field}", field, "{op}", op[0], "{key}", op[1]).Replace(why)
	return fmt.Errorf("%s has no value: %s", field, why)
}

// unsetField is the error of reading field of e where its line gives no value for it
// (Unset): Envoy wrote "-" or null, a value it did not have, which is no 0.
func (e LogEntry) unsetField(field string) error {
	op := lacksOp[field]
	wrote := fmt.Sprintf("Envoy wrote \"-\" for %s in this line", op[0])
	if e.Format == "json" {
		wrote = fmt.Sprintf("Envoy wrote null or \"-\" for %q in this JSON line", op[1])
	}
	return fmt.Errorf("%s has no value: %s, a value it did not have (not 0), so a claim about it would hold or fail of a number Envoy never wrote; read it only of lines that give it", field, wrote)
}

// LogResult is what a logs step records.
type LogResult struct {
	Lines   []string   `expr:"lines" json:"lines"`
	Count   float64    `expr:"count" json:"count"`
	Entries []LogEntry `expr:"entries" json:"entries"`
	// Codes counts access-log lines by response code.
	Codes map[string]float64 `expr:"codes" json:"codes"`
	// Flags counts access-log lines by response flag (a line with "URX,UF" counts for both).
	Flags map[string]float64 `expr:"flags" json:"flags"`
	// Details counts access-log lines by response code details.
	Details map[string]float64 `expr:"details" json:"details"`
	// Captures holds the named groups of every line that matched the step's capture pattern.
	Captures []map[string]string `expr:"captures" json:"captures"`
	// Capture is the named groups of the first match (empty when none matched).
	Capture map[string]string `expr:"capture" json:"capture"`
	// Cut says lines, entries and captures hold only the first and the last lines (about
	// OutputHead and OutputTail bytes of them): count, codes, flags and details count every
	// line, and the step's artifact file holds them all.
	Cut bool `expr:"cut" json:"cut,omitempty"`
	// Pods are the pods whose logs were read: the one named, or every pod the selector
	// matched whose container had started (none of a process's or a file's log, nor in a
	// record made before labrun read them all).
	Pods []string `expr:"pods" json:"pods,omitempty"`
	// Untold counts access lines by the field of codes, flags and details ("code", "flags",
	// "details") their format does not give (LogEntry.Lacks): such a line is not counted
	// there, and a count read where one is (details["…{overflow}"] of lines in Envoy's
	// default format) has no value (NoValue), not the 0 of a line that had none.
	Untold map[string]float64 `expr:"-" json:"untold,omitempty"`
	// Missed is why the pods read may not be every pod the step names since its mark (a
	// mark the API did not answer, a watch of the selector's pods that ended): "" when they
	// are. Every field but pods then has no value (NoValue): a claim over every line
	// (count == 0, no 503) would hold of the pods read and pass over a pod that was not.
	Missed string `expr:"-" json:"missed,omitempty"`
	// Dropped is why lines of the step's window were dropped before it read them (a process
	// whose output since the mark was longer than labrun keeps of it: its first and last
	// lines): "" when none were. Every field but pods then has no value (NoValue): count,
	// codes, flags, details and capture are of the lines kept only, and "no ERROR line"
	// (count == 0) held of a process that wrote one in the lines dropped.
	Dropped string `expr:"-" json:"dropped,omitempty"`
}

// Recount returns l with n access lines counted under key in its kind of count ("codes",
// "flags" or "details"), changed as a log could have them: every access line has one code,
// its flags ("-" for none) and at most one details string, and count counts every line.
//   - More lines under key: lines counted under other keys are moved to key first, the most
//     common first (a request answered otherwise; a flag: lines flagged "-" gain it); what
//     is still missing is new lines, each like a line counted under key (else like the most
//     common line), so that its flags and details are counted too.
//   - Fewer: lines under key move to the most common other key; when there is none, to
//     "200" (or "503") for a code, to "-" (or "UF") for a flag, to no details.
//
// The entries (and lines) of a result that holds every line change with the counts. false
// when nothing changes or n is no count.
func (l LogResult) Recount(kind, key string, n float64) (LogResult, bool) {
	n = math.Round(n)
	if n < 0 || n == l.Counts(kind)[key] {
		return l, false
	}
	l.Codes, l.Flags, l.Details, l.Untold = maps.Clone(l.Codes), maps.Clone(l.Flags), maps.Clone(l.Details), maps.Clone(l.Untold)
	for _, m := range []*map[string]float64{&l.Codes, &l.Flags, &l.Details} {
		if *m == nil {
			*m = map[string]float64{}
		}
	}
	l.Entries = slices.Clone(l.Entries)
	for i := range l.Entries {
		l.Entries[i].Flags = slices.Clone(l.Entries[i].Flags)
	}
	m := l.Counts(kind)
	cur := m[key]
	if n < cur {
		to, ok := mostCommonOther(m, key)
		switch {
		case ok:
		case kind == "codes":
			to = otherCode(key)
		case kind == "flags" && key != "-":
			to = "-"
		case kind == "flags":
			to = "UF"
		default:
			to = "" // details: the lines have none
		}
		l.moveLines(kind, key, to, cur-n)
		return l, true
	}
	need := n - cur
	for need > 0 {
		from, ok := mostCommonOther(m, key)
		if kind == "flags" {
			from, ok = "-", m["-"] > 0 && key != "-"
		}
		if !ok {
			break
		}
		k := min(need, m[from])
		l.moveLines(kind, from, key, k)
		need -= k
	}
	if need > 0 {
		l.addLines(kind, key, need)
	}
	return l, true
}

// Counts are l's counts of access lines of kind "codes", "flags" or "details" (nil for
// another kind): the map itself, not a copy.
func (l LogResult) Counts(kind string) map[string]float64 {
	switch kind {
	case "codes":
		return l.Codes
	case "flags":
		return l.Flags
	case "details":
		return l.Details
	}
	return nil
}

// countLine counts n access lines like e: under its code, each of its flags and its details.
func (l *LogResult) countLine(e LogEntry, n float64) {
	for _, f := range e.Lacks {
		if f == "code" || f == "flags" || f == "details" {
			if l.Untold == nil {
				l.Untold = map[string]float64{}
			}
			l.Untold[f] += n
		}
	}
	codeUnset := slices.Contains(e.Unset, "code") && !slices.Contains(e.Lacks, "code")
	if codeUnset {
		// A JSON line with response_code null says no code: counted under none (before,
		// under "0"), as a line whose format does not give one.
		if l.Untold == nil {
			l.Untold = map[string]float64{}
		}
		l.Untold["code"] += n
	}
	if !slices.Contains(e.Lacks, "code") && !codeUnset {
		l.Codes[e.codeKey()] += n
	}
	for _, f := range e.Flags {
		l.Flags[f] += n
	}
	if len(e.Flags) == 0 && !slices.Contains(e.Lacks, "flags") {
		// A line with no flag ("-") counts under "-", as flags says: before, none did, and
		// flags["-"] == 0 held over lines that had none.
		l.Flags["-"] += n
	}
	if e.Details != "" {
		l.Details[e.Details] += n
	}
}

// untoldField is the entry field each count of a logs result counts by.
var untoldField = map[string]string{"codes": "code", "flags": "flags", "details": "details"}

// codeKey is the key of codes an access line counts under: "503".
func (e LogEntry) codeKey() string { return strconv.Itoa(int(e.Code)) }

// mostCommonOther is m's key other than key with the most lines (ties: the smallest key).
func mostCommonOther(m map[string]float64, key string) (string, bool) {
	best, found := "", false
	for k, v := range m {
		if k == key || v <= 0 {
			continue
		}
		if !found || v > m[best] || (v == m[best] && k < best) {
			best, found = k, true
		}
	}
	return best, found
}

// moveLines makes k access lines counted under from (in kind) counted under to.
func (l *LogResult) moveLines(kind, from, to string, k float64) {
	m := l.Counts(kind)
	m[from] -= k
	if m[from] <= 0 {
		delete(m, from)
	}
	if to != "" {
		m[to] += k
	}
	if l.Cut {
		return
	}
	for i := range l.Entries {
		if k <= 0 {
			break
		}
		e := &l.Entries[i]
		if !e.Access {
			continue
		}
		switch kind {
		case "codes":
			if e.codeKey() == from {
				if c, err := strconv.Atoi(to); err == nil {
					e.Code = float64(c)
					k--
				}
			}
		case "details":
			if e.Details == from {
				e.Details = to
				k--
			}
		case "flags":
			if j := slices.Index(e.Flags, from); j >= 0 || (from == "-" && len(e.Flags) == 0) {
				if j >= 0 {
					e.Flags[j] = to
				} else {
					e.Flags = []string{to}
				}
				k--
			}
		}
	}
}

// maxAddedEntries is how many entries addLines adds before it leaves the entries as they are.
const maxAddedEntries = 10000

// addLines adds k access lines counted under key (in kind): each like a line counted under
// key, else like the most common line.
func (l *LogResult) addLines(kind, key string, k float64) {
	like := -1
	for i, e := range l.Entries {
		if !e.Access {
			continue
		}
		if like < 0 {
			like = i
		}
		if (kind == "codes" && e.codeKey() == key) || (kind == "details" && e.Details == key) || (kind == "flags" && slices.Contains(e.Flags, key)) {
			like = i
			break
		}
	}
	var e LogEntry
	if like >= 0 {
		e = l.Entries[like]
		e.Flags = slices.Clone(e.Flags)
	} else {
		e = LogEntry{Access: true, Flags: []string{"-"}}
		if c, ok := mostCommonOther(l.Codes, ""); ok {
			n, _ := strconv.Atoi(c) // a code key is a number (LogEntry.codeKey)
			e.Code = float64(n)
		}
		if d, ok := mostCommonOther(l.Details, ""); ok {
			e.Details = d
		}
		if f, ok := mostCommonOther(l.Flags, ""); ok {
			e.Flags = []string{f}
		}
	}
	switch kind {
	case "codes":
		if c, err := strconv.Atoi(key); err == nil {
			e.Code = float64(c)
		}
	case "details":
		e.Details = key
	case "flags":
		if !slices.Contains(e.Flags, key) {
			e.Flags = []string{key}
		}
	}
	l.Count += k
	l.countLine(e, k)
	if l.Cut {
		return
	}
	if k > maxAddedEntries {
		l.Cut = true // the entries no longer hold every line, as a result cut by the budgets
		return
	}
	for range int(k) {
		l.Entries = append(l.Entries, e)
		l.Lines = append(l.Lines, e.Line)
	}
}

// SetCount returns l with n lines, as a log of n lines could be: with every line in its
// entries, the lines are cut to the first n or repeated in order up to n, and the counts are
// those of the lines kept; otherwise every count is scaled by n/count (rounded). false when
// nothing changes or n is no count.
func (l LogResult) SetCount(n float64) (LogResult, bool) {
	n = math.Round(n)
	if n < 0 || n == l.Count {
		return l, false
	}
	if !l.Cut && len(l.Entries) == int(l.Count) && l.Count > 0 && n <= maxAddedEntries+l.Count {
		entries := make([]LogEntry, 0, int(n))
		for i := 0; len(entries) < int(n); i++ {
			e := l.Entries[i%len(l.Entries)]
			e.Flags = slices.Clone(e.Flags)
			entries = append(entries, e)
		}
		l.Entries, l.Lines = entries, make([]string, len(entries))
		l.Codes, l.Flags, l.Details, l.Untold = map[string]float64{}, map[string]float64{}, map[string]float64{}, nil
		for i, e := range entries {
			l.Lines[i] = e.Line
			if e.Access {
				l.countLine(e, 1)
			}
		}
		l.Count = n
		return l, true
	}
	r := 0.0
	if l.Count > 0 {
		r = n / l.Count
	}
	scale := func(m map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range m {
			if v = math.Round(v * r); v > 0 {
				out[k] = v
			}
		}
		return out
	}
	l.Codes, l.Flags, l.Details = scale(l.Codes), scale(l.Flags), scale(l.Details)
	if l.Untold != nil {
		l.Untold = scale(l.Untold)
	}
	if l.Count == 0 { // lines where there were none: plain lines, no access line to count
		l.Lines = nil
	}
	l.Count, l.Cut = n, l.Cut || len(l.Entries) > 0
	return l, true
}

// Contradictions are what no logs step records and l says, each with the fields and their
// values; none when a run could have recorded l. A run counts every line it reads (count)
// and every access line under its code, its flags and its details; it keeps each line's
// text and parse in lines and entries, and each line's captures in captures, all of them
// unless the result is cut. So an access line kept is counted, the codes add up to no more
// lines than count, and a result that is not cut holds count entries whose counts and
// captures are its codes, flags, details, captures and capture.
func (l LogResult) Contradictions() []string {
	var out []string
	access := 0.0
	for _, n := range l.Codes {
		access += n
	}
	if access > l.Count {
		out = append(out, fmt.Sprintf("count is %s, but the codes (%s) count %s access lines", num(l.Count), countsText(l.Codes), num(access)))
	}
	details := 0.0
	for _, n := range l.Details {
		details += n
	}
	if details > access {
		out = append(out, fmt.Sprintf("the details count %s access lines, but the codes (%s) count %s (a line has one code and at most one details)", num(details), countsText(l.Codes), num(access)))
	}
	if len(l.Lines) != len(l.Entries) {
		out = append(out, fmt.Sprintf("it keeps %d lines but %d entries (an entry is a line parsed)", len(l.Lines), len(l.Entries)))
	} else {
		for i := range l.Lines {
			if l.Lines[i] != l.Entries[i].Line {
				out = append(out, fmt.Sprintf("lines[%d] is %q, but entries[%d].line is %q", i, l.Lines[i], i, l.Entries[i].Line))
				break
			}
		}
	}
	kept := LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}}
	var captures []map[string]string
	for _, e := range l.Entries {
		if e.Access {
			kept.countLine(e, 1)
		}
		if e.Captures != nil {
			captures = append(captures, e.Captures)
		}
	}
	if !l.Cut {
		if n := float64(len(l.Entries)); n != l.Count {
			out = append(out, fmt.Sprintf("count is %s, but it keeps %d entries and is not cut (it keeps every line)", num(l.Count), len(l.Entries)))
		}
		for _, kind := range []string{"codes", "flags", "details"} {
			if want, got := kept.Counts(kind), l.Counts(kind); !sameCounts(want, got) {
				out = append(out, fmt.Sprintf("%s is %s, but its access entries count %s", kind, countsText(got), countsText(want)))
			}
		}
		if !sameCounts(kept.Untold, l.Untold) {
			out = append(out, fmt.Sprintf("it counts %s access lines whose format does not give a field, but its access entries count %s", countsText(l.Untold), countsText(kept.Untold)))
		}
		if !slices.EqualFunc(captures, l.Captures, maps.Equal) {
			out = append(out, fmt.Sprintf("captures is %v, but its entries captured %v", l.Captures, captures))
		}
		first := map[string]string{}
		if len(captures) > 0 {
			first = captures[0]
		}
		if !maps.Equal(first, l.Capture) && !(len(first) == 0 && len(l.Capture) == 0) {
			out = append(out, fmt.Sprintf("capture is %v, but its first entry that captured captured %v", l.Capture, first))
		}
		return out
	}
	// Cut: the entries kept are some of the lines counted.
	if n := float64(len(l.Entries)); n > l.Count {
		out = append(out, fmt.Sprintf("count is %s, but it keeps %d entries", num(l.Count), len(l.Entries)))
	}
	for _, kind := range []string{"codes", "flags", "details"} {
		want, got := kept.Counts(kind), l.Counts(kind)
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if want[k] > got[k] {
				out = append(out, fmt.Sprintf("%s[%q] is %s, but %s of the access entries kept count under it", kind, k, num(got[k]), num(want[k])))
			}
		}
	}
	return out
}

// sameCounts reports whether two counts by key are the same, a key absent counting 0.
func sameCounts(a, b map[string]float64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// countsText is counts as the console prints codes: 200×18, 503×2 ("none" when empty).
func countsText(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			parts = append(parts, k+"×"+num(m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// LogsFromArtifact is the result a logs step of p records over data, its logs.txt artifact
// (each line read, "<RFC 3339 time> <text>", as Run writes it), parsed again as Run parses
// the lines it reads: how a record's result is held to the lines it was parsed from
// (interp.ArtifactContradictions). Its cut is false: a log a driver could not read whole
// (ErrLinesCut) is known to the record only. pods are the pods the record says were read:
// with several, each line starts with "[pod/NAME] ", as Run writes it, and is that pod's;
// with one, every line is its.
func LogsFromArtifact(p *Logs, data []byte, parse func(string) (LogEntry, bool), pods []string) (LogResult, error) {
	if parse == nil {
		parse = func(string) (LogEntry, bool) { return LogEntry{}, false }
	}
	acc, err := newLogAccumulator(p.Match, p.Capture, parse, OutputHead, OutputTail)
	if err != nil {
		return LogResult{}, err
	}
	for line := range bytes.Lines(data) {
		s := strings.TrimSuffix(string(line), "\n")
		at, text, ok := strings.Cut(s, " ")
		if !ok {
			return LogResult{}, errors.New("a line is not a time and a text")
		}
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return LogResult{}, fmt.Errorf("a line's time: %v", err)
		}
		if t.IsZero() {
			t = time.Time{}
		}
		l := LogLine{Time: t, Text: text}
		switch {
		case len(pods) == 1:
			l.Pod = pods[0]
		case len(pods) > 1:
			rest, ok := strings.CutPrefix(text, "[pod/")
			pod, line, ok2 := strings.Cut(rest, "] ")
			if !ok || !ok2 || !slices.Contains(pods, pod) {
				return LogResult{}, fmt.Errorf("a line does not start with [pod/NAME] of one of the pods read (%s)", strings.Join(pods, ", "))
			}
			l.Pod, l.Text = pod, line
		}
		acc.add(l)
	}
	res := acc.result()
	res.Pods = slices.Clone(pods)
	return res, nil
}

// Reread is l with its entries read again by parse from their lines (each entry's time, pod
// and captures kept) and its counts by code, flag and details recounted from them: a record
// made by an older labrun holds its lines as the older rules read them (before record version
// 5, a line with no flag counted under no flag, and a field a line's format does not give
// read as ""), and is judged and checked by this labrun's rules. Of a log that was cut (not
// every line kept) only the kept lines can be read again: each count keeps the larger of the
// recorded one and the kept entries' (a lower bound for the lines not kept).
func (l LogResult) Reread(parse func(string) (LogEntry, bool)) LogResult {
	out := l
	if l.Entries != nil {
		out.Entries = make([]LogEntry, len(l.Entries))
	}
	kept := LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}}
	for i, old := range l.Entries {
		if old.Line == "" {
			// Nothing to read again (an entry written without its line): kept as recorded.
			if old.Access {
				kept.countLine(old, 1)
			}
			out.Entries[i] = old
			continue
		}
		e, ok := parse(old.Line)
		if !ok {
			e = LogEntry{Line: old.Line}
		}
		e.Line, e.Pod, e.Captures = old.Line, old.Pod, old.Captures
		if e.Time == "" {
			e.Time = old.Time
		}
		if !sameReading(old, e) {
			// The entry does not say what its line says (its flags edited, not its line):
			// kept as recorded, for the record's checks and the judge to see as it is.
			e = old
		}
		if e.Access {
			kept.countLine(e, 1)
		}
		out.Entries[i] = e
	}
	if !l.Cut {
		out.Codes, out.Flags, out.Details, out.Untold = kept.Codes, kept.Flags, kept.Details, kept.Untold
		return out
	}
	larger := func(rec, k map[string]float64) map[string]float64 {
		m := maps.Clone(rec)
		for key, n := range k {
			if m == nil {
				m = map[string]float64{}
			}
			m[key] = max(m[key], n)
		}
		return m
	}
	out.Codes, out.Flags, out.Details, out.Untold = larger(l.Codes, kept.Codes), larger(l.Flags, kept.Flags), larger(l.Details, kept.Details), larger(l.Untold, kept.Untold)
	return out
}

// sameReading reports whether old, an entry an older labrun read, says of its line what e,
// the line read again, says, in every field both read (not those e's format lacks).
func sameReading(old, e LogEntry) bool {
	lacks := func(f string) bool { return slices.Contains(e.Lacks, f) }
	same := old.Access == e.Access && old.Method == e.Method && old.Path == e.Path && old.Protocol == e.Protocol &&
		old.Code == e.Code && old.DurationMS == e.DurationMS && slices.Equal(old.Flags, e.Flags)
	for _, f := range []struct {
		name     string
		old, now string
	}{{"details", old.Details, e.Details}, {"termination", old.Termination, e.Termination}, {"failure", old.Failure, e.Failure}, {"upstream_host", old.UpstreamHost, e.UpstreamHost}, {"cluster", old.Cluster, e.Cluster}} {
		if !lacks(f.name) && f.old != f.now {
			same = false
		}
	}
	return same
}
