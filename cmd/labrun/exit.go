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
	// exitInterrupted: SIGINT or SIGTERM.
	exitInterrupted = 130
)

// exitError carries an exit code out of a cobra command; its message, when not empty, has
// not been printed yet.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
