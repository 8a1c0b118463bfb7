package main

// Exit codes. They are part of labrun's interface: CI jobs branch on them.
const (
	// exitOK: every expectation held.
	exitOK = 0
	// exitFailed: an expectation or an assert step failed.
	exitFailed = 1
	// exitInvalid: the spec is invalid, or the command line is wrong.
	exitInvalid = 2
	// exitInfra: the world failed: cluster unreachable, exec failed, a step timed out.
	exitInfra = 3
	// exitLeftovers: the run ended (its verdict line says how) but left behind what its
	// cleanup could not remove, after retrying: objects that labrun clean lists, or processes.
	exitLeftovers = 4
	// exitInterrupted: SIGINT, SIGTERM or SIGHUP, at any moment (the report says how far the
	// run got).
	exitInterrupted = 130
)

// exitError carries an exit code out of a cobra command; its message, when not empty, has
// not been printed yet.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// printedError is an exitError after what was printed for it (a spec's problems, one per
// line), which a refusal's JUnit file holds (junitOfRefusal).
type printedError struct {
	exitError
	printed string
}

func (e *printedError) Unwrap() error { return &e.exitError }

// junitPathError is an exitError about the --junit file's own path (a directory there, a
// folder that cannot be created or written): no refusal can be written there either
// (junitOfRefusal).
type junitPathError struct {
	exitError
}

func (e *junitPathError) Unwrap() error { return &e.exitError }
