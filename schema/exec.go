package schema

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Exec is the exec step: argv in a pod's container (kube) or on this machine (local).
type Exec struct {
	Argv      []string `json:"argv"`
	Pod       string   `json:"pod,omitempty"`
	Selector  string   `json:"selector,omitempty"`
	Container string   `json:"container,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Stdin     string   `json:"stdin,omitempty"`
	ExitCode  int      `json:"exitCode,omitempty"`
	Capture   string   `json:"capture,omitempty"`
}

var execKind = Kind{
	Usage:  "run a command in a pod or on this machine and capture its output",
	New:    func() Params { return new(Exec) },
	Result: ResultExec,
}

// InPod reports whether the command runs in a pod.
func (p *Exec) InPod() bool { return p.Pod != "" || p.Selector != "" }

// Check: pod or selector, a valid capture pattern.
func (p *Exec) Check(c Checker) {
	if p.Pod != "" && p.Selector != "" {
		c.Errorf("", "exec takes pod or selector, not both")
	}
	if !p.InPod() && (p.Container != "" || p.Namespace != "") {
		field := "container"
		if p.Namespace != "" {
			field = "namespace"
		}
		c.Errorf(field, "%s applies to a command in a pod: give pod or selector, or leave it out to run on this machine", field)
	}
	checkRE(c, "capture", p.Capture)
	checkArgv(c, p.Argv)
}

// CaptureGroups returns the named groups of the capture pattern (nil when it has none or is
// not known before the run).
func (p *Exec) CaptureGroups() []string { return groups(p.Capture) }

// groups returns the named groups of an RE2 pattern.
func groups(re string) []string {
	if re == "" || strings.Contains(re, "${") {
		return nil
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range r.SubexpNames() {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// checkRE reports an invalid RE2 pattern at field.
func checkRE(c Checker, field, re string) {
	if re == "" || c.Templated(field) {
		return
	}
	if _, err := regexp.Compile(re); err != nil {
		c.Errorf(field, "invalid RE2 pattern: %v", err)
	}
}

// Plan: as long as the command runs.
func (p *Exec) Plan() Plan { return Plan{} }

// Needs pods for a command in a pod, this machine otherwise.
func (p *Exec) Needs() Capability {
	if p.InPod() {
		return CapPods
	}
	return CapHost
}

// Mutates nothing the guard knows of (a command is the scenario's own business).
func (p *Exec) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the command.
func (p *Exec) Summary() string { return strings.Join(p.Argv, " ") }

// Run runs the command, records stdout, stderr, the exit code and the captured groups, and
// fails on an exit code other than exitCode.
func (p *Exec) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.InPod() {
		q.Namespace = rt.Namespace(q.Namespace)
	}
	res, err := rt.Target().Exec.Exec(ctx, q)
	if err != nil {
		return err
	}
	if p.Capture != "" {
		re, err := regexp.Compile(p.Capture)
		if err != nil {
			return fmt.Errorf("capture: %v", err)
		}
		if m := re.FindStringSubmatch(res.Stdout); m != nil {
			res.Captured = map[string]string{}
			for i, n := range re.SubexpNames() {
				if n != "" {
					res.Captured[n] = m[i]
				}
			}
		}
	}
	rt.Artifact("stdout.txt", []byte(res.Stdout))
	if res.Stderr != "" {
		rt.Artifact("stderr.txt", []byte(res.Stderr))
	}
	rt.Record(res)
	if int(res.Exit) != p.ExitCode {
		tail := strings.TrimSpace(res.Stderr)
		if r := []rune(tail); len(r) > 400 { // cut by characters, never inside one
			tail = "…" + string(r[len(r)-400:])
		}
		return fmt.Errorf("%s exited with code %d, expected %d; stderr: %s", strings.Join(p.Argv, " "), int(res.Exit), p.ExitCode, or(tail, "(empty)"))
	}
	return nil
}
