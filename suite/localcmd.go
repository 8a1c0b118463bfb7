package suite

import (
	"fmt"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

// localChange says whether a command on this machine (an exec without a pod, a process) may
// change the cluster, and names the command that may: on the kube target it gets the run's
// kubeconfig and context, and what it does is seen by no namespace guard. It is conservative:
// a command is taken for one that changes nothing only when it is known to read (curl, jq,
// kubectl get, istioctl proxy-config, helm list, ...); any other (python3 gen.py, ./setup.sh,
// kubectl run, a $CMD) may change anything. A shell's script (sh -c, or its stdin) is read
// command by command.
func localChange(argv []string, stdin string, scriptFile func([]string) (string, bool)) (string, bool) {
	return commandsChange(argv, stdin, scriptFile, true)
}

// podClusterChange says whether a command run in a pod changes the cluster through a client
// of its API (kubectl, istioctl, helm with the pod's service account): other commands there
// change the pod, which the pod's namespace holds.
func podClusterChange(argv []string, stdin string) (string, bool) {
	return commandsChange(argv, stdin, func([]string) (string, bool) { return "", false }, false)
}

// commandsChange judges argv (a shell's script, its stdin, a script file read by scriptFile,
// or one command); unknown says whether a command labrun does not know changes the cluster.
func commandsChange(argv []string, stdin string, scriptFile func([]string) (string, bool), unknown bool) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	if script, shell, ok := shellScript(argv, stdin, scriptFile); shell {
		if !ok {
			return strings.Join(argv, " "), unknown
		}
		return scriptChange(script, unknown)
	}
	return commandChange(argv, unknown)
}

// shellScript is the script a shell in argv runs: its -c script, the script file scriptFile
// reads (sh check.sh), or its stdin. shell says whether argv runs a shell, ok whether its
// script is known before the run.
func shellScript(argv []string, stdin string, scriptFile func([]string) (string, bool)) (script string, shell, ok bool) {
	if len(argv) == 0 || !shells[path.Base(argv[0])] {
		return "", false, false
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-") && strings.HasSuffix(a, "c") && !strings.HasPrefix(a, "--")):
			if i+1 < len(argv) {
				return argv[i+1], true, true
			}
			return "", true, true
		case strings.HasPrefix(a, "-"):
			continue // -e, -x, -eu, -o pipefail's -o
		case a == "pipefail" && argv[i-1] == "-o":
			continue
		default:
			// A script file: its commands, when it can be read before the run.
			script, ok := scriptFile(argv)
			return script, true, ok
		}
	}
	return stdin, true, true // sh reading its script from stdin
}

// localFiles are the files on this machine a command writes and reads, as far as its words
// say: a shell's redirections (> f, >> f, >| f, 2> f, < f) and the operands of commands known
// to write files (touch, rm, tee, mkdir, mv, cp's last, sort -o's, dd of=, sed -i's files) or
// to read them (cat, head, diff, dd if=, ...).
// Paths are as written; in a shell's script a $NAME or ${NAME} is read from env (the step's
// env:, as the command gets it) or from an assignment earlier in the script (f=out.txt).
// What the command may write that these words do not say is in unseen, one phrase each: a
// path known only when it runs (a $f of neither, a glob), a script not known before the run,
// or a program labrun does not know the files of (python3 gen.py): the schedule cannot keep
// apart two runs that share such a file, and the plan says so (probe p109).
func localFiles(argv []string, stdin string, env map[string]string, scriptFile func([]string) (string, bool)) (writes, reads, unseen []string) {
	cmds := [][]string{argv}
	shell := false
	if script, isShell, ok := shellScript(argv, stdin, scriptFile); isShell {
		if !ok {
			return nil, nil, []string{fmt.Sprintf("runs %q, a script not known before the run", strings.Join(argv, " "))}
		}
		shell = true
		cmds = nil
		for _, c := range shellCommands(script) {
			cmds = append(cmds, shellWords(c))
		}
	}
	vars := maps.Clone(env)
	if vars == nil {
		vars = map[string]string{}
	}
	expand := func(w string) string {
		if !shell || !strings.Contains(w, "$") {
			return w
		}
		known := true
		x := os.Expand(w, func(k string) string {
			v, ok := vars[k]
			known = known && ok && !strings.Contains(v, "$")
			return v
		})
		if !known {
			return w // as written: known only when it runs
		}
		return x
	}
	note := func(what string) {
		if !slices.Contains(unseen, what) {
			unseen = append(unseen, what)
		}
	}
	add := func(to *[]string, p string) {
		p = expand(p)
		if p == "" || p == "-" || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
			return
		}
		if strings.ContainsAny(p, "$*?`~{[") {
			if to == &writes {
				note(fmt.Sprintf("writes %s, a path known only when it runs", p))
			}
			return
		}
		if !slices.Contains(*to, p) {
			*to = append(*to, p)
		}
	}
	for _, words := range cmds {
		// An assignment alone (f=out.txt, export f=out.txt) sets what a later $f reads.
		if shell {
			assigns := words
			if len(assigns) > 0 && (assigns[0] == "export" || assigns[0] == "readonly" || assigns[0] == "local") {
				assigns = assigns[1:]
			}
			if len(assigns) > 0 && commandStart(assigns) == len(assigns) {
				for _, a := range assigns {
					if k, v, ok := strings.Cut(a, "="); ok && shellName.MatchString(k) {
						vars[k] = expand(v)
					}
				}
				continue
			}
		}
		var rest []string
		for i := 0; i < len(words); i++ {
			w := words[i]
			op := strings.TrimLeft(w, "0123456789") // 2> and 1>> redirect as > and >> do
			var arrow string
			for _, a := range []string{">>", ">|", ">", "<"} {
				if strings.HasPrefix(op, a) && !strings.HasPrefix(op, "<<") && !strings.HasPrefix(op, "<(") && !strings.HasPrefix(op, ">(") {
					arrow = a
					break
				}
			}
			if arrow == "" {
				rest = append(rest, w)
				continue
			}
			target := strings.TrimPrefix(op, arrow)
			if target == "" && i+1 < len(words) {
				i++
				target = words[i]
			}
			if arrow == "<" {
				add(&reads, target)
			} else {
				add(&writes, target)
			}
		}
		start := commandStart(rest)
		if start >= len(rest) {
			continue
		}
		name, args := path.Base(rest[start]), rest[start+1:]
		if shell && shells[name] {
			// A shell in the script (bash -c '…', sh gen.sh): its own commands, read the
			// same way, with the variables known here.
			w, r, u := localFiles(rest[start:], "", vars, scriptFile)
			for _, x := range w {
				add(&writes, x)
			}
			for _, x := range r {
				add(&reads, x)
			}
			for _, x := range u {
				note(x)
			}
			continue
		}
		if !knownFiles(name, args) {
			note(fmt.Sprintf("runs %s, a program whose files labrun does not know", rest[start]))
		}
		var operands []string
		for i := 0; i < len(args); i++ {
			w := args[i]
			// An option's own argument is no operand: sort -o OUT, sed -e SCRIPT.
			switch {
			case name == "sort" && (w == "-o" || w == "--output"), name == "sed" && sedScript(w):
				if i+1 < len(args) {
					i++
					if name == "sort" {
						add(&writes, args[i])
					}
				}
				continue
			case name == "sort" && strings.HasPrefix(w, "--output="):
				add(&writes, strings.TrimPrefix(w, "--output="))
			case name == "sort" && strings.HasPrefix(w, "-o"):
				add(&writes, strings.TrimPrefix(w, "-o"))
			case name == "dd" && strings.HasPrefix(w, "of="):
				add(&writes, strings.TrimPrefix(w, "of="))
			case name == "dd" && strings.HasPrefix(w, "if="):
				add(&reads, strings.TrimPrefix(w, "if="))
			}
			if !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "<") && !strings.HasPrefix(w, ">") { // <<EOF, <(cmd)
				operands = append(operands, w)
			}
		}
		if name == "sed" && sedInPlace(args) {
			// sed -i writes each file it is given; its script is the first operand unless
			// -e or -f gave it.
			if !slices.ContainsFunc(args, sedScript) && len(operands) > 0 {
				operands = operands[1:]
			}
			for _, o := range operands {
				add(&writes, o)
			}
			continue
		}
		switch {
		case fileWriters[name]:
			for _, o := range operands {
				add(&writes, o)
			}
		case (name == "cp" || name == "install" || name == "ln") && len(operands) > 0:
			add(&writes, operands[len(operands)-1])
		case fileReaders[name]:
			for _, o := range operands {
				add(&reads, o)
			}
		}
	}
	return writes, reads, unseen
}

// shellName is a shell variable's name.
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// knownFiles says whether the files a command writes are all known from its words: the
// commands localFiles reads the operands of, and those that write no file (their output
// goes where the shell redirects it). curl writes a file only with an output option, and
// one named in its words (-o f) is known.
func knownFiles(name string, args []string) bool {
	switch {
	case fileWriters[name], fileReaders[name], writesNoFile[name], shells[name]:
		return true
	case name == "cp", name == "install", name == "ln", name == "sed", name == "sort", name == "dd":
		return true
	case name == "curl":
		return !slices.ContainsFunc(args, func(a string) bool {
			return a == "-O" || a == "--remote-name" || a == "--remote-name-all" || a == "-J" ||
				a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") ||
				a == "-c" || a == "--cookie-jar" || a == "-D" || a == "--dump-header" ||
				a == "--trace" || a == "--trace-ascii" || a == "--output-dir" ||
				(len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "oOcDJ"))
		})
	}
	return false
}

// writesNoFile are commands that write no file of their own: what they print goes where the
// shell sends it.
var writesNoFile = map[string]bool{
	"echo": true, "printf": true, "sleep": true, "true": true, "false": true, "test": true,
	"[": true, "[[": true, "exit": true, "return": true, "cd": true, "set": true, "unset": true,
	"shift": true, "wait": true, "kill": true, "read": true, ":": true, "grep": true,
	"egrep": true, "fgrep": true, "jq": true, "tr": true, "cut": true, "basename": true,
	"dirname": true, "pwd": true, "printenv": true, "id": true, "whoami": true, "hostname": true,
	"uname": true, "date": true, "seq": true, "expr": true, "nc": true, "dig": true,
	"nslookup": true, "host": true, "ping": true, "ps": true, "pgrep": true, "ls": true,
	"env": true, "timeout": true, "yes": true, "base64": true, "od": true,
	"hexdump": true, "xxd": true, "rev": true, "nl": true, "paste": true, "join": true,
	"comm": true, "column": true, "fold": true, "getent": true, "ss": true, "netstat": true,
	"trap": true, "break": true, "continue": true,
}

// sedScript says a sed option gives its script (in the next word).
func sedScript(w string) bool {
	return w == "-e" || w == "--expression" || w == "-f" || w == "--file"
}

// sedInPlace says sed's arguments edit its files in place (-i, -i.bak, --in-place, -ni).
func sedInPlace(args []string) bool {
	return slices.ContainsFunc(args, func(w string) bool {
		if strings.HasPrefix(w, "-i") || strings.HasPrefix(w, "--in-place") {
			return true
		}
		// A cluster of short options whose i takes the rest as its suffix: -ni, -Ei.bak.
		opts, ok := strings.CutPrefix(w, "-")
		i := strings.IndexByte(opts, 'i')
		return ok && i > 0 && !strings.HasPrefix(opts, "-") && strings.Trim(opts[:i], "nrsuzE") == ""
	})
}

// fileWriters are the commands that write (create, change or remove) each file they name.
var fileWriters = map[string]bool{"touch": true, "rm": true, "tee": true, "mkdir": true, "rmdir": true, "mv": true, "truncate": true, "unlink": true, "shred": true}

// fileReaders are the commands that read each file they name.
var fileReaders = map[string]bool{"cat": true, "head": true, "tail": true, "wc": true, "diff": true, "cmp": true, "sort": true, "uniq": true, "md5sum": true, "sha256sum": true, "stat": true}

// shells are the shells whose -c script (or stdin) is read command by command.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// scriptChange judges each command of a shell script.
func scriptChange(script string, unknown bool) (string, bool) {
	for _, cmd := range shellCommands(script) {
		if what, ok := commandChange(shellWords(cmd), unknown); ok {
			return what, true
		}
	}
	return "", false
}

// shellCommands splits a shell script into its simple commands: at ; & | and new lines, (
// and ), and at a command substitution ($( or a backquote, in double quotes too), not inside
// single quotes nor at a comment's separators.
func shellCommands(script string) []string {
	var cmds []string
	var b strings.Builder
	var quote byte
	comment := false
	cut := func() { cmds = append(cmds, b.String()); b.Reset() }
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case comment:
			if c == '\n' {
				comment = false
				cut()
			}
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
			b.WriteByte(c)
		case c == '`' || (c == '$' && i+1 < len(script) && script[i+1] == '('):
			cut()
			if c == '$' {
				i++
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '#' && (b.Len() == 0 || strings.HasSuffix(b.String(), " ")):
			comment = true
		case c == '|' && strings.HasSuffix(b.String(), ">"):
			b.WriteByte(c) // >|: a redirection (over noclobber), not a pipe
		case strings.IndexByte(";&|\n()", c) >= 0:
			cut()
		default:
			b.WriteByte(c)
		}
	}
	cut()
	return cmds
}

// shellWords splits a command at blanks, dropping quotes (no expansion).
func shellWords(cmd string) []string {
	var words []string
	var b strings.Builder
	var quote rune
	in := false
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\r':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, b.String())
	}
	return words
}

// commandChange judges one command: its name after assignments, keywords and wrappers.
func commandChange(words []string, unknown bool) (string, bool) {
	if i := commandStart(words); i < len(words) {
		return judge(words[i:], unknown)
	}
	return "", false
}

// commandStart is the index of a command's name: past assignments (X=y), keywords (then,
// do) and wrappers with their flags (env, exec, timeout 5s).
func commandStart(words []string) int {
	i := 0
	for i < len(words) {
		w := words[i]
		switch {
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "="):
			i++ // X=y before the command
		case shellKeywords[w]:
			i++
		case w == "timeout":
			i++
			for i < len(words) && (strings.HasPrefix(words[i], "-") || startsWithDigit(words[i])) {
				i++ // its flags and its duration
			}
		case wrappers[w]:
			i++
			for i < len(words) && strings.HasPrefix(words[i], "-") {
				i++
			}
		default:
			return i
		}
	}
	return i
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// judge judges a command from its name.
func judge(words []string, unknown bool) (string, bool) {
	name := path.Base(words[0])
	what := strings.Join(words, " ")
	switch name {
	case "kubectl", "oc":
		return what, kubectlChanges(words[1:])
	case "istioctl":
		return what, istioctlChanges(words[1:])
	case "helm":
		verb, _ := verbOf(words[1:], nil)
		return what, verb != "" && !helmReads[verb]
	}
	if readOnly[name] || !unknown {
		return "", false
	}
	return what, true
}

// verbOf is the first word of args that is no flag (nor a flag's value, for the flags of
// valued that take one), and the words after it.
func verbOf(args []string, valued map[string]bool) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if valued[a] {
				i++
			}
			continue
		}
		return a, args[i+1:]
	}
	return "", nil
}

// kubectlFlags are kubectl's flags that take a value as the next word.
var kubectlFlags = map[string]bool{
	"-n": true, "--namespace": true, "--context": true, "--kubeconfig": true, "--cluster": true,
	"--user": true, "-s": true, "--server": true, "--token": true, "-l": true, "--selector": true,
	"-o": true, "--output": true, "-c": true, "--container": true, "--as": true, "--as-group": true,
	"--request-timeout": true, "-f": true, "--filename": true, "--field-selector": true,
	"-L": true, "--label-columns": true, "--sort-by": true, "--template": true, "-v": true,
	"--v": true, "--for": true, "--timeout": true, "-p": true, "--pod-running-timeout": true,
}

// kubectlChanges says whether a kubectl command may change the cluster: any verb but those
// that read (a --dry-run other than none changes nothing either).
func kubectlChanges(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--dry-run") && a != "--dry-run=none" {
			return false
		}
	}
	verb, rest := verbOf(args, kubectlFlags)
	sub, _ := verbOf(rest, kubectlFlags)
	switch verb {
	case "", "get", "describe", "logs", "explain", "api-resources", "api-versions", "version",
		"cluster-info", "top", "events", "wait", "port-forward", "diff", "completion":
		return false
	case "auth":
		return sub != "can-i" && sub != "whoami"
	case "config":
		// use-context and set-context change the kubeconfig other runs read.
		return !slices.Contains([]string{"view", "get-contexts", "current-context", "get-clusters", "get-users"}, sub)
	case "rollout":
		return sub != "status" && sub != "history"
	}
	return true
}

// istioctlChanges says whether an istioctl command may change the cluster (or a proxy: a
// log level set through proxy-config log).
func istioctlChanges(args []string) bool {
	verb, rest := verbOf(args, kubectlFlags)
	sub, _ := verbOf(rest, kubectlFlags)
	setsLevel := slices.ContainsFunc(args, func(a string) bool {
		return a == "--level" || strings.HasPrefix(a, "--level=") || a == "--reset" || a == "-r"
	})
	switch verb {
	case "", "proxy-config", "pc", "ztunnel-config", "zc":
		return setsLevel && sub == "log"
	case "proxy-status", "ps", "analyze", "version", "validate", "verify-install", "dashboard",
		"dash", "d", "bug-report", "kube-inject", "create-remote-secret", "remote-clusters",
		"completion", "help":
		return false
	case "x", "experimental":
		return !slices.Contains([]string{"describe", "precheck", "check-inject", "authz", "internal-debug", "envoy-stats", "metrics", "version"}, sub)
	case "manifest":
		return sub != "generate" && sub != "translate"
	case "waypoint", "tag":
		return !slices.Contains([]string{"list", "status", "generate"}, sub)
	}
	return true
}

// helmReads are helm's verbs that change no cluster.
var helmReads = map[string]bool{
	"list": true, "ls": true, "status": true, "get": true, "template": true, "show": true,
	"inspect": true, "search": true, "repo": true, "version": true, "lint": true, "env": true,
	"history": true, "completion": true, "help": true, "pull": true, "package": true, "verify": true,
}

// shellKeywords are skipped before a command's name (for's and case's words are no command).
var shellKeywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"while": true, "until": true, "!": true, "time": true, "esac": true, "{": true, "}": true,
}

// wrappers run the command after them (and their flags).
var wrappers = map[string]bool{"exec": true, "command": true, "nohup": true, "env": true, "nice": true, "stdbuf": true, "builtin": true, "xargs": true, "watch": true}

// readOnly are commands on this machine that change no cluster (they may write local files,
// print, wait, or call a URL, which the footprint reads elsewhere).
var readOnly = map[string]bool{
	"echo": true, "printf": true, "cat": true, "grep": true, "egrep": true, "fgrep": true,
	"sed": true, "awk": true, "gawk": true, "jq": true, "yq": true, "head": true, "tail": true,
	"wc": true, "sort": true, "uniq": true, "cut": true, "tr": true, "sleep": true, "date": true,
	"true": true, "false": true, "test": true, "[": true, "[[": true, "]]": true, "]": true,
	"curl": true, "wget": true, "dig": true, "nslookup": true, "host": true, "ping": true,
	"seq": true, "tee": true, "ls": true, "mkdir": true, "touch": true, "rm": true, "cp": true,
	"mv": true, "pwd": true, "cd": true, "export": true, "set": true, "unset": true, "read": true,
	"basename": true, "dirname": true, "base64": true, "openssl": true, "nc": true, "xxd": true,
	"od": true, "hexdump": true, "fortio": true, "hey": true, "ab": true, "diff": true,
	"cmp": true, "stat": true, "find": true, "printenv": true, "which": true, "type": true,
	"exit": true, "return": true, "shift": true, "local": true, "wait": true, "ps": true,
	"bc": true, "expr": true, "tac": true, "rev": true, "column": true, "fold": true,
	"md5sum": true, "sha256sum": true, "uname": true, "hostname": true, "id": true,
	"whoami": true, "for": true, "case": true, ":": true, "break": true, "continue": true,
	"grpcurl": true, "kill": true, "trap": true, "sha1sum": true, "ss": true, "netstat": true,
	"lsof": true,
}

// fetchValued are, for curl and wget, the short flags (the last letter of a cluster such as
// -sSo) and long flags that take the next word as their value.
var fetchValued = map[string]struct {
	short string
	long  []string
}{
	"curl": {"oHwXduAemxbcFTKrYyz", []string{"--output", "--header", "--write-out", "--request", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--user", "--user-agent", "--referer", "--max-time", "--connect-timeout", "--resolve", "--connect-to", "--proxy", "--cacert", "--cert", "--key", "--retry", "--retry-delay", "--retry-max-time", "--limit-rate", "--interface", "--local-port", "--unix-socket", "--form", "--upload-file", "--config"}},
	"wget": {"OoTtUea", []string{"--output-document", "--header", "--timeout", "--tries", "--user-agent", "--output-file", "--post-data", "--method", "--body-data"}},
}

// fetchedURLs are the URLs that curl and wget commands fetch, written with no scheme
// (curl -s httpbin.org/headers), as http:// URLs: of the command words, and of each command
// of its script when it is a shell's -c.
func fetchedURLs(words []string) []string {
	var out []string
	cmds := [][]string{words}
	if len(words) > 0 && shells[path.Base(words[0])] {
		for i, a := range words[1:] {
			if a == "-c" || (strings.HasPrefix(a, "-") && strings.HasSuffix(a, "c") && !strings.HasPrefix(a, "--")) {
				if i+2 < len(words) {
					for _, cmd := range shellCommands(words[i+2]) {
						cmds = append(cmds, shellWords(cmd))
					}
				}
				break
			}
		}
	}
	for _, cmd := range cmds {
		// Past assignments, keywords and wrappers, as commandChange reads a command.
		i := commandStart(cmd)
		if i >= len(cmd) {
			continue
		}
		v, ok := fetchValued[path.Base(cmd[i])]
		if !ok {
			continue
		}
		for j := i + 1; j < len(cmd); j++ {
			a := cmd[j]
			switch {
			case slices.Contains(v.long, a):
				j++
			case strings.HasPrefix(a, "--"):
			case strings.HasPrefix(a, "-") && len(a) > 1:
				if strings.ContainsRune(v.short, rune(a[len(a)-1])) && !strings.ContainsAny(a[1:len(a)-1], v.short) {
					j++ // -sSo FILE; a value attached (-qO-) takes no next word
				}
			case !strings.Contains(a, "://") && strings.ContainsAny(a, ".:") && !strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "$"):
				out = append(out, "http://"+a)
			}
		}
	}
	return out
}
