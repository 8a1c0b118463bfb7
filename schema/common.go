package schema

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// checkHTTPURL checks an http(s) URL with a host (an admin or Prometheus endpoint).
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil {
		if perr := checkPort(u.Port()); perr != nil {
			return fmt.Errorf("url %q: %v", raw, perr)
		}
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: expected http://host:port, e.g. \"http://127.0.0.1:15000\"", raw)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// A returns "a kind" or "an kind", for messages ("an exec step").
func A(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// checkPort checks a port number as written ("" is the scheme's default).
func checkPort(port string) error {
	if port == "" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s: expected a port from 1 to 65535", port)
	}
	return nil
}

// CheckHostPort checks a listen or connect address: host:port with a port from 0 to 65535
// (0: any free port).
func CheckHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("expected host:port, e.g. \"127.0.0.1:8080\", got %q", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("address %q: expected a port from 0 to 65535", addr)
	}
	if host == "" {
		return fmt.Errorf("address %q has no host: expected e.g. \"127.0.0.1%s\"", addr, addr)
	}
	return nil
}

// checkArgv checks a command line: a program to run.
func checkArgv(c Checker, argv []string) {
	if len(argv) > 0 && strings.TrimSpace(argv[0]) == "" && !c.Templated("argv.0") {
		c.Errorf("argv.0", "expected a program name, got %q", argv[0])
	}
	if len(argv) > 0 && strings.ContainsAny(strings.TrimSpace(argv[0]), " \t") && !strings.HasPrefix(argv[0], "/") && !c.Templated("argv.0") {
		// argv runs no shell: "uname -s" would be looked up as one program of that name.
		words := strings.Fields(argv[0])
		c.Errorf("argv.0", "expected a program name, got %q, which holds spaces: argv runs no shell, so write each word as its own item, %s, or a shell command as [\"sh\", \"-c\", %q]", argv[0], cueList(append(words, argv[1:]...)), strings.Join(argv, " "))
	}
}

// checkNotZero refuses a duration written as zero where leaving the field out means a
// default: the zero would silently mean that default, not zero. dflt names the default
// ("5s", or "" when it depends on the step).
func checkNotZero(c Checker, field string, d Duration, dflt string) {
	if d != 0 || !c.Has(field) || c.Templated(field) {
		return
	}
	c.ValueErrorf(field, "%s", ZeroDuration(field[strings.LastIndexByte(field, '.')+1:], "the default", dflt))
}

// ZeroDuration is the message of a duration field written as zero whose absence means
// something else: what leaving it out means (e.g. "the default"), and the default's value
// when there is one.
func ZeroDuration(name, absent, dflt string) string {
	if dflt != "" {
		absent += " (" + dflt + ")"
	}
	return fmt.Sprintf("%s is zero: expected a positive duration (0 does not mean zero here): leave %s out for %s", name, name, absent)
}

// cueList writes strings as a CUE list: ["uname", "-s"].
func cueList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
