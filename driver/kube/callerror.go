package kube

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"labrun.dev/labrun/dsl"
)

// callError is a failed call to the API server, summarised for people: the method, the path
// without its query string (an exec URL carries the whole argv, URL-encoded, and client-go
// repeats it in every layer of the error), the HTTP status when there was one, and the cause.
// Full keeps the error exactly as client-go gave it, for the report's artifacts.
type callError struct {
	Method, Path string
	// Status is "403 Forbidden" and the like; empty when no response came back.
	Status string
	Cause  string
	Full   string
	err    error
}

func (e *callError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method + " " + e.Path)
	if e.Status != "" {
		b.WriteString(": " + e.Status)
	}
	if e.Cause != "" {
		b.WriteString(": " + e.Cause)
	}
	return b.String()
}

func (e *callError) Unwrap() error { return e.err }

// maxCause bounds the summarised cause; the full text stays in callError.Full.
const maxCause = 300

// summarizeCall wraps err, the failure of method on u, as a callError.
func summarizeCall(method string, u *url.URL, err error) error {
	if err == nil {
		return nil
	}
	ce := &callError{Method: method, Path: u.Path, Full: err.Error(), err: err}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		if st.Code != 0 {
			ce.Status = fmt.Sprintf("%d %s", st.Code, http.StatusText(int(st.Code)))
		}
		ce.Cause = st.Message
	}
	if ce.Cause == "" {
		ce.Cause = rootCause(err)
	}
	ce.Cause = dsl.Truncate(stripQueries(ce.Cause), maxCause)
	return ce
}

// rootCause is the text of the innermost error of err's chain (a url.Error's cause, say "dial
// tcp 127.0.0.1:6443: connect: connection refused"), or err's own text when it wraps nothing.
func rootCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

var urlRE = regexp.MustCompile(`(?:https?|wss?)://[^\s"']+`)

// stripQueries removes the query string of every URL in s, and the repetition of one URL
// right after another ("Post \"u\": … u").
func stripQueries(s string) string {
	return urlRE.ReplaceAllStringFunc(s, func(m string) string {
		if u, err := url.Parse(strings.TrimRight(m, ".,:;)")); err == nil && u.RawQuery != "" {
			return u.Scheme + "://" + u.Host + u.Path
		}
		return m
	})
}

// fullErrors is the complete text of every callError in err, for an artifact; "" when err
// holds none (its own text is already complete).
func fullErrors(err error) string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		var ce *callError
		switch x := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range x.Unwrap() {
				walk(c)
			}
			return
		}
		if errors.As(e, &ce) {
			out = append(out, ce.Method+" "+ce.Path+":\n"+ce.Full)
		}
	}
	walk(err)
	return strings.Join(out, "\n\n")
}
