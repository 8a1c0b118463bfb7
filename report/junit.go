package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// The JUnit XML written here is valid against both the strict Apache Ant schema (every suite
// attribute present, properties/system-out/system-err in order, error and failure typed, times
// plain decimals, timestamps without a zone) and Jenkins' xunit JUnit schema; the tests check
// both with xmllint. A CI that reads only the JUnit file must never see an unfinished run as a
// success: a run that was interrupted, refused or stopped by an error always has an error case.

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  string          `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit writes one suite per record: a test case per step (its failures and errors), per
// expectation, and one named "run" when the run did not reach its end (interrupted, refused,
// an infrastructure error), naming the step and the message.
// Each run in notStarted (planned, never started) is a suite of one skipped case saying why.
// Each Markdown document in docs is a suite with a case per expected-output block: a block that
// did not match the run is a failure holding the diff, one not compared is skipped, saying why,
// and a document that could not be read is an error.
func JUnit(path string, recs []*interp.Record, notStarted []NotStarted, docs ...DocCheck) error {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	b, err := junitXML(recs, host, notStarted, docs)
	if err != nil {
		return err
	}
	return writeJUnit(path, b)
}

// JUnitRefused writes the JUnit file of an invocation that ended before any run it would
// report (labrun run of a spec refused, merge of records it refused): one suite, named for the
// command, of one error case whose message says so with the exit code, its text why.
func JUnitRefused(path, command string, code int, why string) error {
	return junitOfInvocation(path, command, "refused", fmt.Sprintf("%s ended before any run (exit %d)", command, code), code, why)
}

// JUnitAbandoned writes the JUnit file of an invocation that an interrupt ended at once,
// before it wrote the file its runs would have (a third interrupt, a run still not stopped
// after the second): one suite, named for the command, of one error case of type
// "interrupted" that says so with the exit code, its text why. An older file left in its
// place would read as this invocation's results.
func JUnitAbandoned(path, command string, code int, why string) error {
	return junitOfInvocation(path, command, "interrupted", fmt.Sprintf("%s was interrupted and exited before its runs' results were written (exit %d)", command, code), code, why)
}

// junitOfInvocation writes one suite, named for the command, of one error case of the given
// outcome.
func junitOfInvocation(path, command, outcome, message string, code int, why string) error {
	host, err := os.Hostname()
	if err != nil || strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	out := junitSuites{Suites: []junitSuite{{
		Name: command, Package: "labrun", Hostname: host,
		Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05"), Time: seconds(0), Tests: 1, Errors: 1,
		Properties: []junitProperty{{"outcome", outcome}, {"exit", strconv.Itoa(code)}},
		Cases: []junitCase{{Name: "invocation", Classname: command, Time: seconds(0),
			Error: &junitMessage{Type: outcome, Message: message, Text: why}}},
	}}}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return writeJUnit(path, append([]byte(xml.Header), append(b, '\n')...))
}

// writeJUnit writes b at path; when it cannot (a full disk, a file-size limit), it removes
// the file an earlier invocation left there: read as this one's results by a CI that
// publishes the JUnit whatever the exit code, its passes stood for a run that failed. A
// device, a pipe or a link there is left alone.
func writeJUnit(path string, b []byte) error {
	err := WriteFile(path, b)
	if err == nil {
		return nil
	}
	if fi, serr := os.Lstat(path); serr == nil && fi.Mode().IsRegular() {
		if rerr := os.Remove(path); rerr == nil {
			return fmt.Errorf("%w (the older file there is removed, lest it be read as this invocation's results)", err)
		}
	}
	return err
}

// NotStarted is a planned run that never started: its unit's id, scenario and file, and why.
type NotStarted struct {
	ID, Scenario, File, Why string
}

// DocCheck is the check of one expected-output block of a Markdown document against the run
// (labrun run FILE.md): at most one of Failure (what was printed about the mismatch: the diff),
// Skipped (why it was not compared) and Error (the document could not be read; Line 0) is set;
// none when the block matched.
type DocCheck struct {
	File                    string
	Line                    int
	Failure, Skipped, Error string
}

func junitXML(recs []*interp.Record, host string, notStarted []NotStarted, docs []DocCheck) ([]byte, error) {
	out := junitSuites{Suites: []junitSuite{}}
	covered := coveredRuns(recs)
	for i, rec := range recs {
		s := junitSuiteOf(i, rec, host)
		if why := covered[rec]; why != "" {
			s.cover(why)
		}
		out.Suites = append(out.Suites, s)
	}
	for i, n := range notStarted {
		out.Suites = append(out.Suites, junitSuite{
			Name: n.ID, Package: "labrun", ID: len(recs) + i, Hostname: host,
			Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05"), Time: seconds(0), Tests: 1, Skipped: 1,
			Properties: []junitProperty{{"file", n.File}, {"outcome", string(interp.Skipped)}},
			Cases:      []junitCase{{Name: "run", Classname: n.Scenario, Time: seconds(0), Skipped: &junitMessage{Message: n.Why}}},
		})
	}
	out.Suites = append(out.Suites, docSuites(len(recs)+len(notStarted), host, docs)...)
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// docSuites makes a suite per document of docs, in their order, numbered from id.
func docSuites(id int, host string, docs []DocCheck) []junitSuite {
	var suites []junitSuite
	at := map[string]int{}
	for _, d := range docs {
		i, ok := at[d.File]
		if !ok {
			i = len(suites)
			at[d.File] = i
			suites = append(suites, junitSuite{
				Name: d.File, Package: "labrun", ID: id + i, Hostname: host,
				Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05"), Time: seconds(0),
				Properties: []junitProperty{{"file", d.File}},
			})
		}
		s := &suites[i]
		c := junitCase{Name: "expected-output block at line " + strconv.Itoa(d.Line), Classname: d.File, Time: seconds(0)}
		switch {
		case d.Error != "":
			c.Name = "expected-output blocks"
			c.Error = &junitMessage{Message: d.Error, Type: "error", Text: d.File + ": " + d.Error}
			s.Errors++
		case d.Failure != "":
			c.Failure = &junitMessage{Message: "the expected-output block does not match the run", Type: "expected-output", Text: d.Failure}
			s.Failures++
		case d.Skipped != "":
			c.Skipped = &junitMessage{Message: d.Skipped}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	for i := range suites {
		s := &suites[i]
		outcome := interp.Passed
		switch {
		case s.Errors > 0:
			outcome = interp.Errored
		case s.Failures > 0:
			outcome = interp.Failed
		case s.Skipped == s.Tests:
			outcome = interp.Skipped
		}
		s.Properties = append(s.Properties, junitProperty{"outcome", string(outcome)})
	}
	return suites
}

func junitSuiteOf(id int, rec *interp.Record, host string) junitSuite {
	name := rec.Scenario
	if strings.TrimSpace(name) == "" {
		name = "scenario"
	}
	if u := rec.Unit; u != nil && u.Matrix != nil && u.Matrix.Summarized() {
		name = u.ID // one run of a sweep or of --count: its combination and round
	}
	s := junitSuite{
		Name: name, Package: "labrun", ID: id, Hostname: host,
		Timestamp: rec.Start.UTC().Format("2006-01-02T15:04:05"),
		Time:      seconds(rec.End.Sub(rec.Start)),
		Properties: []junitProperty{
			{"file", rec.File}, {"target", rec.Target}, {"outcome", string(rec.Outcome)},
		},
	}
	if rec.Where != "" {
		s.Properties = append(s.Properties, junitProperty{"where", rec.Where})
	}
	for _, k := range sortedKeys(rec.Vars) {
		s.Properties = append(s.Properties, junitProperty{"vars." + k, dsl.Stringify(rec.Vars[k])})
	}
	interrupted := rec.Outcome == interp.Interrupted
	add := func(c junitCase) {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	var stoppedAt []string
	for _, st := range rec.Steps {
		if st.Sample > 0 && st.Outcome == interp.Passed {
			continue
		}
		if st.Kind == "parallel" || st.Kind == "sequence" {
			// A block's outcome is its children's; counting it too would count one problem twice.
			continue
		}
		name := st.Path
		if st.Name != "" {
			name = st.Name + " (" + st.Path + ")"
		} else if st.Label != "" {
			name = st.Label + " (" + st.Path + ")"
		}
		if st.Sample > 0 {
			name += fmt.Sprintf(" #%d", st.Sample)
		}
		c := junitCase{Name: name, Classname: name0(rec.Scenario) + "." + string(st.Phase), Time: seconds(st.End - st.Start)}
		detail := fmt.Sprintf("%s: %s (%s) at +%s: %s", st.Pos, st.Path, st.Kind, seconds(st.Start), st.Error)
		switch {
		case st.Phase == dsl.PhaseCatch && st.Outcome != interp.Passed:
			// What a catch step could not collect is not a problem of the run's: the
			// failure that made catch run is.
			c.Skipped = &junitMessage{Message: "catch: " + orDefault(st.Error, string(st.Outcome))}
			add(c)
			continue
		case st.Outcome != interp.Passed && slices.Contains(st.Warnings, interp.MayFailWarning):
			// The scenario allowed it to fail (mayFail): the run went on, and a CI must not
			// count it against the run.
			c.Skipped = &junitMessage{Message: "mayFail: " + orDefault(st.Error, string(st.Outcome))}
			add(c)
			continue
		}
		switch st.Outcome {
		case interp.Failed:
			c.Failure = &junitMessage{Message: st.Error, Type: "assertion", Text: detail}
		case interp.Errored, interp.TimedOut:
			c.Error = &junitMessage{Message: st.Error, Type: string(st.Outcome), Text: detail}
		case interp.Skipped:
			msg := "not run: " + orDefault(st.Error, "the run ended before it")
			if strings.HasPrefix(st.Error, "not run: ") {
				msg = st.Error // a step the run's stop kept from starting says so itself
			}
			c.Skipped = &junitMessage{Message: msg}
		case interp.Cancelled:
			if interrupted {
				msg := "interrupted while this step ran"
				c.Error = &junitMessage{Message: msg, Type: "interrupted", Text: fmt.Sprintf("%s: %s (%s) at +%s: %s", st.Pos, st.Path, st.Kind, seconds(st.Start), msg)}
				stoppedAt = append(stoppedAt, name)
			} else {
				c.Skipped = &junitMessage{Message: "cancelled: " + orDefault(st.Error, "another step stopped the run")}
			}
		}
		add(c)
	}
	for _, j := range rec.Expectations {
		c := junitCase{Name: j.Src, Classname: name0(rec.Scenario) + ".expect", Time: "0"}
		msg := j.Explanation
		if j.Reason != "" {
			msg = j.Reason
		}
		switch j.Outcome {
		case interp.Failed:
			c.Failure = &junitMessage{Message: msg, Type: "expectation", Text: fmt.Sprintf("%s: %s", j.Pos, msg)}
		case interp.Errored:
			c.Error = &junitMessage{Message: msg, Type: "expectation", Text: fmt.Sprintf("%s: %s", j.Pos, msg)}
		case interp.Skipped:
			c.Skipped = &junitMessage{Message: msg}
		}
		add(c)
	}
	if rec.Outcome != interp.Passed && rec.Outcome != interp.Failed || s.Failures+s.Errors == 0 && rec.Outcome != interp.Passed {
		// The run did not reach its verdict: say so in a case of its own, so that a CI counting
		// failures and errors never reads this run as a success.
		msg := orDefault(rec.Error, string(rec.Outcome))
		text := msg
		if rec.ErrorPos != nil {
			text = rec.ErrorPos.String() + ": " + msg
		}
		if len(stoppedAt) > 0 {
			text += "\nrunning when interrupted: " + strings.Join(stoppedAt, ", ")
		}
		add(junitCase{Name: "run", Classname: name0(rec.Scenario), Time: seconds(rec.End.Sub(rec.Start)),
			Error: &junitMessage{Message: msg, Type: string(rec.Outcome), Text: text}})
	}
	if rec.ReportLost != "" {
		// The run's record is lost: whatever its verdict, a CI must not read the run as one
		// that left its evidence (labrun exits 3).
		add(junitCase{Name: "report", Classname: name0(rec.Scenario), Time: "0",
			Error: &junitMessage{Message: rec.ReportLost, Type: "report", Text: rec.ReportLost}})
	}
	if lb := rec.LeftBehind(); lb != "" {
		// The cleanup could not remove what the run made (labrun, and labrun merge of its
		// record, exit 4): before, a run that passed said failures 0, errors 0 here, and a CI
		// reading the JUnit counted it a success.
		msg := "the run " + lb
		add(junitCase{Name: "cleanup", Classname: name0(rec.Scenario), Time: "0",
			Error: &junitMessage{Message: msg, Type: "leftovers", Text: msg}})
	}
	s.Tests = len(s.Cases)
	var so strings.Builder
	fmt.Fprintf(&so, "%s: %s in %s", rec.Scenario, rec.Outcome, seconds(rec.End.Sub(rec.Start)))
	if mf := MayFailed(rec); mf != "" {
		fmt.Fprintf(&so, " — %s", mf)
	}
	so.WriteString("\n")
	for _, w := range rec.Warnings {
		fmt.Fprintf(&so, "%s\n", w)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(&so, "note: %s\n", n)
	}
	for _, c := range rec.Cleanup {
		fmt.Fprintf(&so, "cleanup: %s\n", c)
	}
	s.SystemOut = so.String()
	if rec.Error != "" {
		s.SystemErr = rec.Error + "\n"
	}
	return s
}

// coveredRuns are the failed runs of recs that their combination's pass rate covers, each
// with what covers it ("--pass-rate 0.6: 2 of 3 runs of once passed, 2 needed"): labrun exits
// 0 for them (the summary's verdict), and a JUnit marking them <failure> failed the CI that
// reads it where the run passed.
func coveredRuns(recs []*interp.Record) map[*interp.Record]string {
	type group struct {
		runs   []*interp.Record
		passed int
		m      *dsl.Matrix
		id     string
	}
	groups := map[string]*group{}
	for _, rec := range recs {
		u := rec.Unit
		if u == nil || u.Matrix == nil || u.Matrix.PassRate <= 0 {
			continue
		}
		plan := u.Matrix.Plan()
		plan.File = filepath.Join(filepath.Base(filepath.Dir(plan.File)), filepath.Base(plan.File)) // one plan's shards merged from two checkouts
		b, _ := json.Marshal(plan)
		k := fmt.Sprintf("%s\x00%s\x00%d", u.Matrix.Scenario, b, u.Combination)
		g := groups[k]
		if g == nil {
			g = &group{m: u.Matrix, id: strings.TrimSuffix(u.ID, fmt.Sprintf("#%d", u.Round))}
			groups[k] = g
		}
		g.runs = append(g.runs, rec)
		if summaryOutcome(rec) == interp.Passed {
			g.passed++
		}
	}
	out := map[*interp.Record]string{}
	for _, g := range groups {
		need := Need(g.m.PassRate, g.m.Count)
		if g.passed < need {
			continue
		}
		for _, rec := range g.runs {
			if summaryOutcome(rec) == interp.Failed {
				out[rec] = fmt.Sprintf("--pass-rate %s: %d of %d runs of %s passed, %d needed", strconv.FormatFloat(g.m.PassRate, 'g', -1, 64), g.passed, g.m.Count, g.id, need)
			}
		}
	}
	return out
}

// cover marks a failed run its pass rate covers (why): each case that failed it is skipped,
// saying it failed and what covers it, with its failure's text, so that the suite shows the
// run and its failure while counting no failure the exit does not (the suite's outcome
// property stays "failed"; a property "covered" says why it does not count).
func (s *junitSuite) cover(why string) {
	for i := range s.Cases {
		c := &s.Cases[i]
		m := c.Failure
		if m == nil {
			m = c.Error
		}
		if m == nil || m.Type == "report" || m.Type == "leftovers" {
			continue // a lost record (exit 3), what the cleanup left (exit 4): whatever the rate
		}
		c.Skipped = &junitMessage{Message: "failed, covered by " + strings.Replace(why, ": ", " (", 1) + "): " + m.Message, Text: m.Text}
		c.Failure, c.Error = nil, nil
		s.Skipped++
	}
	s.Failures, s.Errors = 0, 0
	for _, c := range s.Cases {
		if c.Error != nil {
			s.Errors++
		}
	}
	s.Properties = append(s.Properties, junitProperty{"covered", why})
}

// seconds formats a duration as JUnit wants it: seconds as a plain decimal, never an exponent.
func seconds(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// name0 is a scenario name usable as a class name (never empty).
func name0(s string) string {
	if strings.TrimSpace(s) == "" {
		return "scenario"
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
