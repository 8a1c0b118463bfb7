package report

import (
	"encoding/xml"
	"fmt"
	"os"

	"labrun.dev/labrun/interp"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes one suite per record: a test case per step (its failures and errors) and per
// expectation.
func JUnit(path string, recs []*interp.Record) error {
	var out junitSuites
	for _, rec := range recs {
		s := junitSuite{Name: rec.Scenario, Time: rec.End.Sub(rec.Start).Seconds()}
		for _, st := range rec.Steps {
			if st.Sample > 0 && st.Outcome == interp.Passed {
				continue
			}
			name := st.Path
			if st.Name != "" {
				name = st.Name + " (" + st.Path + ")"
			}
			if st.Sample > 0 {
				name += fmt.Sprintf(" #%d", st.Sample)
			}
			c := junitCase{Name: name, Classname: rec.Scenario + ".steps", Time: (st.End - st.Start).Seconds()}
			switch st.Outcome {
			case interp.Failed:
				c.Failure = &junitMessage{Message: st.Error, Text: fmt.Sprintf("%s: %s", st.Pos, st.Error)}
				s.Failures++
			case interp.Errored, interp.TimedOut:
				c.Error = &junitMessage{Message: st.Error, Text: fmt.Sprintf("%s: %s", st.Pos, st.Error)}
				s.Errors++
			case interp.Cancelled:
				c.Skipped = &junitMessage{Message: "cancelled"}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		for _, j := range rec.Expectations {
			c := junitCase{Name: j.Src, Classname: rec.Scenario + ".expect"}
			msg := j.Explanation
			if j.Reason != "" {
				msg = j.Reason
			}
			switch j.Outcome {
			case interp.Failed:
				c.Failure = &junitMessage{Message: msg, Text: fmt.Sprintf("%s: %s", j.Pos, msg)}
				s.Failures++
			case interp.Errored:
				c.Error = &junitMessage{Message: msg, Text: fmt.Sprintf("%s: %s", j.Pos, msg)}
				s.Errors++
			case interp.Skipped:
				c.Skipped = &junitMessage{Message: msg}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.Suites = append(out.Suites, s)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}
