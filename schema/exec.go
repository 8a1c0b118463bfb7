package schema

import (
	"context"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Exec is the exec step: argv in a pod's container (kube) or on this machine (every target).
type Exec struct {
	Argv      []string `json:"argv"`
	Pod       string   `json:"pod,omitempty"`
	Selector  string   `json:"selector,omitempty"`
	Container string   `json:"container,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Stdin     string   `json:"stdin,omitempty"`
	ExitCode  int      `json:"exitCode,omitempty"`
	Capture   string   `json:"capture,omitempty"`
	// Env adds environment variables to the command (on this machine), or is passed through
	// env(1) in front of argv (in a pod).
	Env map[string]string `json:"env,omitempty"`

	// Stdout and Stderr, set by the step for its driver, receive the command's output as it
	// comes (the step's bounded capture, which streams it to the artifact file); a driver
	// given them leaves ExecResult's Stdout and Stderr empty.
	Stdout io.Writer `json:"-"`
	Stderr io.Writer `json:"-"`
}

var execKind = Kind{
	Usage: "run a command in a pod or on this machine and capture its output",
	New:   func() Params { return new(Exec) },
}

// InPod reports whether the command runs in a pod.
func (p *Exec) InPod() bool { return p.Pod != "" || p.Selector != "" }

// Check: pod or selector, a container only in a pod, a valid capture pattern, env names.
// A command on this machine may name a namespace: it is its LABRUN_NAMESPACE.
func (p *Exec) Check(c Checker) {
	if p.Pod != "" && p.Selector != "" {
		c.Errorf("", "exec takes pod or selector, not both")
	}
	if !p.InPod() && p.Container != "" {
		c.Errorf("container", "container applies to a command in a pod: give pod or selector, or leave it out to run on this machine")
	}
	checkCapture(c, "capture", p.Capture, "")
	checkArgv(c, p.Argv)
	checkEnv(c, p.Env)
}

// envName is the shape of an environment variable's name that shells and env(1) accept.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnv checks the names of a command's added environment: names env(1) and shells
// accept, and none of labrun's own (LABRUN_*, which labrun sets itself).
func checkEnv(c Checker, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		field := "env." + k
		if strings.Contains(k, ".") {
			field = "env" // a dotted name is not a path
		}
		switch {
		case !envName.MatchString(k):
			c.Errorf(field, "env name %q: expected letters, digits and _, not starting with a digit (e.g. MY_VAR)", k)
		case strings.HasPrefix(k, "LABRUN_"):
			c.Errorf(field, "env name %q: LABRUN_ names are labrun's own (it sets LABRUN_NAMESPACE, LABRUN_CONTEXT); choose another", k)
		}
	}
}

// HostNamespaceEnv is the variable that tells a command on this machine its step's namespace.
const HostNamespaceEnv = "LABRUN_NAMESPACE"

// withNamespace returns env plus LABRUN_NAMESPACE=ns (env itself when ns is empty).
func withNamespace(env map[string]string, ns string) map[string]string {
	if ns == "" {
		return env
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out[HostNamespaceEnv] = ns
	return out
}

// podArgv is argv behind env(1) with the step's env, for a pod (the exec API passes no
// environment): env K=V ... argv. It needs env(1) in the container.
func podArgv(argv []string, env map[string]string) []string {
	if len(env) == 0 {
		return argv
	}
	out := []string{"env"}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return append(out, argv...)
}

// CaptureGroups returns the named groups of the capture pattern (nil when it has none or is
// not known before the run).
func (p *Exec) CaptureGroups() []string { return groups(p.Capture) }

// CaptureMatch returns the named groups of re's first match in s, nil when re does not match
// s. A group that takes no part in the match (in an alternative the match did not take:
// (?P<a>x)|(?P<b>y) matching "y" leaves a out) is not in it: recorded as "", a claim
// captured.a != 'z' would judge a value no line held.
func CaptureMatch(re *regexp.Regexp, s string) map[string]string {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, n := range re.SubexpNames() {
		if n != "" && 2*i+1 < len(m) && m[2*i] >= 0 {
			out[n] = s[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

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

// checkCapture checks a capture pattern: valid, with a named group (an unnamed one records
// nothing). more adds to the fix.
func checkCapture(c Checker, field, re, more string) {
	if re == "" || c.Templated(field) {
		return
	}
	r, err := regexp.Compile(re)
	if err != nil {
		c.Errorf(field, "invalid RE2 pattern: %v", err)
		return
	}
	if len(groups(re)) == 0 {
		c.ValueErrorf(field, "capture %q has no named group, so nothing would be recorded: expected a named group such as (?P<value>...)%s", r, more)
	}
}

// Plan: as long as the command runs.
func (p *Exec) Plan() Plan { return Plan{} }

// Needs pods for a command in a pod, this machine otherwise.
func (p *Exec) Needs() Need {
	if p.InPod() {
		return Need{CapPods, DriverExec}
	}
	return Need{CapHost, DriverExec}
}

// Mutates nothing the guard knows of (a command is the scenario's own business).
func (p *Exec) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the command.
func (p *Exec) Summary() string { return strings.Join(p.Argv, " ") }

// ExitArtifact is the artifact in which an exec step keeps the exit code it records, or, for
// a command that ended with none (records of version 7 on), why: ExitNotStarted or ExitCut.
const ExitArtifact = "exit.txt"

// What an exec's ExitArtifact holds when the command ended without an exit code: it could not
// be started (not found, not executable, no pod: DidNotRun, which a bare expectFail: true
// does not expect), or the run cut it (its timeout, the scenario's, an interrupt). Neither
// records a result, so the record alone did not tell them apart: a step that could not start,
// edited into "failed as expected", replayed PASSED.
const (
	ExitNotStarted = "not started"
	ExitCut        = "cut"
)

// Run runs the command, records stdout, stderr, the exit code and the captured groups, and
// fails on an exit code other than exitCode.
func (p *Exec) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.InPod() {
		q.Namespace = rt.Namespace(q.Namespace)
		q.Argv, q.Env = podArgv(q.Argv, q.Env), nil
	} else {
		// On this machine the namespace is the command's LABRUN_NAMESPACE, not a place to run.
		q.Env, q.Namespace = withNamespace(q.Env, rt.Namespace(q.Namespace)), ""
	}
	// Memory holds a bounded head and tail of each stream; the whole goes to the artifacts.
	outFile, errFile := rt.ArtifactWriter("stdout.txt"), rt.ArtifactWriter("stderr.txt")
	stdout := NewCapture(outFile, OutputHead, OutputTail)
	stderr := NewCapture(errFile, OutputHead, OutputTail)
	q.Stdout, q.Stderr = stdout, stderr
	res, err := rt.Target().Exec.Exec(ctx, q)
	ended := ExitCut
	if err != nil && ctx.Err() == nil {
		ended, err = ExitNotStarted, &DidNotRun{Err: err, Why: "it could not be started"} // not found, not executable, no pod
	}
	// A driver that returns the output instead of streaming it (a test's) gets it captured.
	_, _ = io.WriteString(stdout, res.Stdout)
	_, _ = io.WriteString(stderr, res.Stderr)
	outFile.Close()
	errFile.Close()
	// The exit code is kept beside the output: replay holds the record's to it, so that a
	// record edited into a pass (its exec's exit code and outcome changed together) is refused.
	// A command that ended without one says why.
	if err == nil {
		ended = strconv.FormatFloat(res.Exit, 'f', -1, 64)
	}
	exitFile := rt.ArtifactWriter(ExitArtifact)
	_, _ = io.WriteString(exitFile, ended+"\n")
	exitFile.Close()
	if err != nil {
		return err
	}
	for _, c := range []*Capture{stdout, stderr} {
		if e := c.Err(); e != nil {
			rt.Warn(fmt.Sprintf("the command's output could not be saved whole: %v", e))
		}
	}
	res.Stdout, res.Stderr = stdout.Text(), stderr.Text()
	res.StdoutCut, res.StderrCut = stdout.Cut(), stderr.Cut()
	res.Cut = res.StdoutCut || res.StderrCut
	if p.Capture != "" {
		re, err := regexp.Compile(p.Capture)
		if err != nil {
			return fmt.Errorf("capture: %v", err)
		}
		res.Captured = CaptureMatch(re, res.Stdout)
	}
	rt.Record(res)
	if int(res.Exit) != p.ExitCode {
		tail := strings.TrimSpace(res.Stderr)
		if r := []rune(tail); len(r) > 400 { // cut by characters, never inside one
			tail = "…" + string(r[len(r)-400:])
		}
		// What the command said, not what it was asked: the error holds no echo of the argv
		// (shown beside the step's name wherever the error is). An expectFail: "403" or an
		// error.<step> contains '403' on curl …?status=403 held for any failure of the command,
		// a refused connection (exit 7) too, as the URL in the error matched.
		err := fmt.Errorf("exited with code %d, expected %d; stderr: %s", int(res.Exit), p.ExitCode, or(tail, "(empty)"))
		if res.Exit == 126 || res.Exit == 127 { // a shell's "cannot execute", "command not found"
			return &DidNotRun{Err: err, Why: fmt.Sprintf("exit code %d is a shell's command not found or not executable", int(res.Exit))}
		}
		return err
	}
	return nil
}

// Result: the command's output and exit code, and the named groups of its capture pattern.
func (p *Exec) Result(c ResultContext) *Type {
	captured := captureMap(c, p.Capture)
	t := StructOf(reflect.TypeFor[ExecResult](),
		whole(F("stdout", StringType, "what the command wrote to its standard output"), "stdoutCut"),
		whole(F("stderr", StringType, "what the command wrote to its standard error"), "stderrCut"),
		F("exit", Num(Plain), "the command's exit code"),
		capturedWhole(F("captured", captured, "the named groups of capture's first match in stdout; when nothing matched, a group has no value: an expression or ${...} that reads it errors (saying so), unless it reads it only where has(<name>.captured, \"group\") holds; compared whole (== or !=), it has no value either")),
		F("cut", BoolType, "stdout or stderr was longer than labrun keeps: the first and last bytes are here, the whole in the step's artifact files"),
		F("stdoutCut", BoolType, "stdout was longer than labrun keeps (its first and last MiB): reading stdout is then an error, not a claim judged over part of it"),
		F("stderrCut", BoolType, "stderr was longer than labrun keeps (its first and last MiB): reading stderr is then an error, not a claim judged over part of it"),
	)
	if c.Sampled() {
		return t.Every(PerSample)
	}
	return t
}

// whole marks f, a stream of a command's output, as read only where the stream was kept
// whole (the boolean field cut, e.g. stdoutCut, is false). Over the first and last MiB of a
// longer output, !(job.stdout contains 'ERROR') held of a job whose ERROR line was in the
// middle: reading it is an error instead.
func whole(f *Field, cut string) *Field {
	f.OnlyIf = "!" + cut
	f.OnlyIfWhy = "the command wrote more to its {field} than labrun keeps (its first and last MiB; the whole is in the run's artifacts), so a claim over it would be judged over part of it: have the command judge its own output (grep -c, an exit code) or write less"
	return f
}

// capturedWhole marks f, the groups of the capture pattern's first match, as read only where
// stdout was kept whole: matched over its first and last MiB, a match in the cut middle was
// no match (!has(job.captured, "errors") held of a job that printed errors=7 there), and one
// found in the last MiB not the first.
func capturedWhole(f *Field) *Field {
	f.OnlyIf = "!stdoutCut"
	f.OnlyIfWhy = "the command wrote more to its stdout than labrun keeps (its first and last MiB; the whole is in the run's artifacts), so its capture would be matched over part of it: have the command print what the claim needs in less (grep -o, a count), or judge its own output (an exit code)"
	return f
}

// captureGroup is the key of a capture's map: a named group of the step's capture pattern.
var captureGroup = &Type{Kind: TString, Doc: "a named group of the step's capture pattern", Hint: "name one with (?P<%s>...)", Go: StringType.Go}

// Mutants: another exit code (the step itself fails on it), empty output.
func (p *Exec) Mutants(recorded any) []Mutant {
	if _, ok := recorded.(ExecResult); !ok {
		return nil
	}
	return []Mutant{
		{Name: "another exit code", CaughtBy: fmt.Sprintf("the step itself (an exit code other than %d fails it)", p.ExitCode), Apply: func(v any) any {
			e := v.(ExecResult)
			if e.Exit == 0 {
				e.Exit = 1
			} else {
				e.Exit = 0
			}
			return e
		}},
		{Name: "empty stdout, nothing captured", Apply: func(v any) any {
			e := v.(ExecResult)
			e.Stdout, e.Captured = "", nil
			return e
		}},
	}
}

// captureMap is the named groups of a capture pattern by name: the keys are known before the
// run (none without a pattern), unless the pattern holds a ${...}, or has no named group,
// which Check refuses (reading one is not that mistake again).
func captureMap(c ResultContext, pattern string) *Type {
	t := MapOf(captureGroup, StringType)
	switch {
	case c.Templated("capture"):
		return t
	case pattern == "":
		return t.WithKeys([]string{})
	}
	return t.WithKeys(groups(pattern))
}

// ExecResult is what an exec step records. The named groups of its capture pattern are
// fields of Captured.
type ExecResult struct {
	Stdout   string            `expr:"stdout" json:"stdout"`
	Stderr   string            `expr:"stderr" json:"stderr"`
	Exit     float64           `expr:"exit" json:"exit"`
	Captured map[string]string `expr:"captured" json:"captured,omitempty"`
	// Cut says stdout or stderr was longer than labrun keeps (OutputHead + OutputTail): it
	// holds the first and the last bytes around a line saying how much is missing, and the
	// step's artifact files hold the whole.
	Cut bool `expr:"cut" json:"cut,omitempty"`
	// StdoutCut and StderrCut say which stream was cut: an expression's read of it errs.
	StdoutCut bool `expr:"stdoutCut" json:"stdoutCut,omitempty"`
	StderrCut bool `expr:"stderrCut" json:"stderrCut,omitempty"`
}

// DidNotRun is the error of a step whose command never ran what it was given: it could not be
// started, or a shell said the command was not found or not executable (exit 127, 126). A
// bare expectFail: true is no failure of what the step tests; a pattern naming the error is.
type DidNotRun struct {
	Err error
	Why string
}

func (e *DidNotRun) Error() string { return e.Err.Error() }
func (e *DidNotRun) Unwrap() error { return e.Err }

// NotTested says the command did not run, and what expectFail: true expects instead.
func (e *DidNotRun) NotTested() (why, expects string) {
	return "the command did not run: " + e.Why, "expectFail: true expects the step to fail, not to not run"
}

// NotJudged is the error of an expression that could not be judged true or false: it reads a
// value that does not exist (a capture that matched nothing, a step that did not run), a stat
// no snapshot holds, or it meets a type error. What the step claims was not tested: a bare
// expectFail: true is no failure of it (an assert expected to fail is one found false); a
// pattern naming the error is. Err says why the expression has no answer.
type NotJudged struct{ Err error }

func (e *NotJudged) Error() string { return e.Err.Error() }
func (e *NotJudged) Unwrap() error { return e.Err }

// NotTested says the expression could not be evaluated, and what expectFail: true expects.
func (e *NotJudged) NotTested() (why, expects string) {
	return "the expression could not be evaluated", "expectFail: true expects it to be false, not to have no answer"
}

// EmptyUntil is the error of an until (a wait's, a get's, a config's, a repeat's) that did not
// hold because a collection it reads was empty (dsl.EmptyCollection): what the step saw, the
// state it waits for not there, so its timeout (or max) fails the step (exit 1) as an until
// still false does, saying the collection was empty. It judged no item, though: a bare
// expectFail: true, which expects the until to be false, is not met by it; a pattern naming the
// error is.
type EmptyUntil struct{ Err error }

func (e *EmptyUntil) Error() string { return e.Err.Error() }
func (e *EmptyUntil) Unwrap() error { return e.Err }

// Failure marks it a failed expectation (IsFailure).
func (e *EmptyUntil) Failure() {}

// NotTested says the until judged no item, and what expectFail: true expects instead.
func (e *EmptyUntil) NotTested() (why, expects string) {
	return "its until read an empty collection to the end and judged no item", "expectFail: true expects the until to be false over items, not over an empty collection"
}

// NotTested is an error that says a step did not test what it was written to test (DidNotRun,
// NotJudged, GuardRefused), rather than that the thing tested failed. why says what did not happen,
// expects what expectFail: true expects instead.
type NotTested interface {
	error
	NotTested() (why, expects string)
}
