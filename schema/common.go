package schema

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
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
		return
	}
	if len(argv) == 0 {
		return
	}
	prog := argv[0][strings.LastIndexByte(argv[0], '/')+1:]
	if shells[prog] && len(argv) > 3 && argv[1] == "-c" && shellWord.MatchString(argv[2]) && !c.Templated("argv.2") {
		// sh -c echo hello runs "echo" alone: hello is the script's $0. The run printed an
		// empty line, and n.exit == 0 held of a command that never got its argument.
		c.Errorf("argv.2", "sh -c runs the one item after -c as the whole script (%q), and the items after it become the script's $0, $1, …, not the arguments of %s: write the script as one item, [%q, \"-c\", %q]", argv[2], argv[2], argv[0], shellLine(argv[2:]))
		return
	}
	if shells[prog] || noShellOps[prog] {
		return
	}
	for i, w := range argv[1:] {
		if !shellOps[w] || c.Templated(fmt.Sprintf("argv.%d", i+1)) {
			continue
		}
		// argv runs no shell: ["echo", "a", "|", "wc", "-w"] printed "a | wc -w", and
		// ["echo", "x", ">", "f"] wrote no file; a claim on the exit code held of either.
		c.Errorf(fmt.Sprintf("argv.%d", i+1), "expected an argument of %s, got %q, a shell operator: argv runs no shell, so %s receives %q as a word and nothing is piped or redirected; write a shell command as [\"sh\", \"-c\", %q]", argv[0], w, argv[0], w, shellLine(argv))
		return
	}
}

// shellLine is argv as one shell command line: a word that holds what a shell would split or
// expand is single-quoted (the operators are left bare, as the user meant them).
func shellLine(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if shellOps[w] || shellWord.MatchString(w) {
			words[i] = w
			continue
		}
		words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(words, " ")
}

// shells are the programs whose -c takes a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ash": true, "ksh": true}

// shellWord is a script of sh -c that is one bare word, the name of a command.
var shellWord = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)

// shellOps are the words a shell reads as a pipe, a redirection or a list operator.
var shellOps = map[string]bool{"|": true, "||": true, "&&": true, ">": true, ">>": true, "2>": true, "2>&1": true, "&>": true, "|&": true, "<": true}

// noShellOps are the programs that take such words as their own operators (test 1 \< 2,
// expr 1 \| 0), as argv gives them.
var noShellOps = map[string]bool{"test": true, "[": true, "expr": true}

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
