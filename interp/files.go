package interp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// The files steps read (apply.files, delete.files, wait.matchFiles and absentFiles) are read
// when the step starts, their ${...} filled with what the run knows then
// (dsl.Scenario.ExpandFile). A file that holds ${...} is written filled to the run's own
// folder and the driver reads that copy; the errors it returns name the scenario's file again.

// ReadFile implements schema.Runtime.
//
// An apply's file is checked for Chainsaw's template values (schema.ChainsawTemplates) here
// too: vet checks a file it can read before the run, not one whose path or content holds
// ${...}, nor one a command writes, and those were applied with "($namespace)" as text.
func (rt *stepRuntime) ReadFile(path string) (string, error) {
	p, err := rt.ru.readFile(path, rt.File(path))
	if err != nil {
		return p, err
	}
	if _, apply := rt.s.Params.(*schema.Apply); apply {
		if err := chainsawTemplates(path, p); err != nil {
			return "", err
		}
	}
	return p, nil
}

// chainsawTemplates is the error naming each Chainsaw template value of the objects of the
// file at p (written as the step names it), nil when there is none or the file does not read
// or parse (the driver says why).
func chainsawTemplates(written, p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	objs, err := dsl.YAMLObjects(written, data)
	if err != nil {
		return nil
	}
	var msgs []string
	for _, o := range objs {
		schema.ChainsawTemplates(o.Object, func(path []string, msg string) {
			msgs = append(msgs, fmt.Sprintf("%s: %s: %s", o.Source, strings.Join(path, "."), msg))
		})
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// ChangedDuringRun is the digest Record.FileDigests gives a file whose content was not the
// same at every read of the run: the run wrote it, and what it holds after says nothing of
// what the steps read.
const ChangedDuringRun = "changed during the run"

// noteFile notes the digest of a file a step read, by the path the step names (written).
func (ru *run) noteFile(written string, data []byte) {
	sum := sha256.Sum256(data)
	ru.noteDigest(written, digestPrefix+hex.EncodeToString(sum[:]))
}

// noteDigest is noteFile of a file whose digest d is known.
func (ru *run) noteDigest(written, d string) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.fileDigests == nil {
		ru.fileDigests = map[string]string{}
	}
	if was, ok := ru.fileDigests[written]; ok && was != d {
		d = ChangedDuringRun
	}
	if was, ok := ru.fileStart[written]; ok && was != d {
		d = ChangedDuringRun // the run wrote it before this read
	}
	ru.fileDigests[written] = d
}

// startDigests are the digests of the files sc's steps read (dsl.StepFiles, those whose
// path has no ${...}) when the run starts, by the path the step names; a file that cannot be
// read then is given "". A step that reads a file the run wrote before it (content that
// differs from run to run: a step that renders a manifest) reads what no later read gives:
// noteFile records it as changed during the run. Before, its digest was kept as if the file
// were the scenario's own, and replay refused every genuine record of such a run once the
// next run had rewritten the file.
//
// A path written with ${...} is resolved over env (the run's, as it starts: vars, namespaces,
// the target's values), when it resolves before any step ran: the step reads it at that path
// and its digest is kept under it (replay resolves it so too, changedFiles). One that reads a
// capture is resolved only when its step runs, and has no start digest.
func startDigests(sc *dsl.Scenario, file func(string) string, env map[string]any) map[string]string {
	out := map[string]string{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			files := dsl.StepFiles(s)
			var resolved map[string][]string
			for field, fs := range files {
				for i, f := range fs {
					if strings.Contains(f, "${") {
						if resolved == nil {
							resolved = map[string][]string{}
							if p, err := s.ResolveKnown(env); err == nil {
								c := *s
								c.Params = p
								resolved = dsl.StepFiles(&c)
							}
						}
						if i >= len(resolved[field]) || strings.Contains(resolved[field][i], "${") {
							continue
						}
						f = resolved[field][i]
					}
					data, err := os.ReadFile(file(f))
					if err != nil {
						out[f] = ""
						continue
					}
					sum := sha256.Sum256(data)
					out[f] = digestPrefix + hex.EncodeToString(sum[:])
				}
			}
			// The files a command names: one the run writes before the command reads it is
			// "changed during the run" (noteFile), as a manifest it renders is.
			argv, stdin := commandFiles(s.Params)
			for _, f := range slices.Concat(argv, stdin) {
				if strings.Contains(f, "${") {
					continue
				}
				out[f], _ = regularFileDigest(file(f))
			}
		})
	}
	return out
}

// readFile returns path (the file the step names as written), or the path of its copy with
// its ${...} filled.
func (ru *run) readFile(written, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		ru.noteFile(written, data)
	}
	if err != nil || !strings.Contains(string(data), "${") {
		return path, nil // the driver says why it cannot read it
	}
	ru.mu.Lock()
	env := ru.judge.Env()
	ru.mu.Unlock()
	filled, err := ru.sc.ExpandFile(path, data, env)
	if err != nil {
		return "", err
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.filesDir == "" {
		if ru.filesDir, err = os.MkdirTemp("", "labrun-files-"); err != nil {
			return "", fmt.Errorf("filling the ${...} of %s: %w", path, err)
		}
	}
	// One folder per copy, the file's own name in it: the driver's messages name
	// "<folder>/pod.yaml, line 3", which fromCopies turns back into the scenario's path.
	dir := filepath.Join(ru.filesDir, fmt.Sprint(len(ru.copies)))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	cp := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(cp, filled, 0o600); err != nil {
		return "", err
	}
	if ru.copies == nil {
		ru.copies = map[string]string{}
	}
	ru.copies[cp] = path
	return cp, nil
}

// fromCopies names the scenario's files in an error that names their filled copies.
func (ru *run) fromCopies(err error) error {
	ru.mu.Lock()
	copies := ru.copies
	ru.mu.Unlock()
	if err == nil || len(copies) == 0 {
		return err
	}
	msg := err.Error()
	for cp, orig := range copies {
		msg = strings.ReplaceAll(msg, cp, orig)
	}
	if msg == err.Error() {
		return err
	}
	return &renamed{msg: msg, err: err}
}

// renamed is an error whose message names the scenario's files; it unwraps to the original.
type renamed struct {
	msg string
	err error
}

func (e *renamed) Error() string { return e.msg }
func (e *renamed) Unwrap() error { return e.err }

// removeCopies removes the filled copies at the end of the run.
func (ru *run) removeCopies() {
	if ru.filesDir != "" {
		_ = os.RemoveAll(ru.filesDir)
	}
}

// ReadObjects implements schema.Runtime.
// Each object's fields are checked against its kind's, as a match's are (partialMisses): vet
// checks a built-in kind's in a file it can read before the run; one that holds ${...}, one a
// command writes, and a custom resource's are checked here, before the wait polls (a built-in
// kind's again: vet refused those it could see).
func (rt *stepRuntime) ReadObjects(ctx context.Context, paths []string) ([]schema.FileObject, error) {
	var out []schema.FileObject
	var errs []error
	for _, p := range paths {
		path := rt.File(p)
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rt.ru.noteFile(p, data)
		rt.ru.mu.Lock()
		env := rt.ru.judge.Env()
		rt.ru.mu.Unlock()
		if data, err = rt.ru.sc.ExpandFile(path, data, env); err != nil {
			errs = append(errs, err)
			continue
		}
		objs, err := dsl.YAMLObjects(p, data)
		if err != nil {
			errs = append(errs, err)
		} else if len(objs) == 0 {
			// A wait over no object holds at once (vet refuses such a file when it can read
			// it before the run; one written by the run, or named by a ${...}, is known only now).
			errs = append(errs, fmt.Errorf("%s holds no object (%s): the wait would hold at once; give the objects to wait for", p, dsl.NoObjectWhy))
		}
		for _, o := range objs {
			for _, m := range rt.ru.partialMisses(ctx, rt, rt.s, "object of "+o.Source, o.Object, true) {
				errs = append(errs, fmt.Errorf("%s: %s", o.Source, m))
			}
		}
		out = append(out, objs...)
	}
	return out, errors.Join(errs...)
}

// commandFiles are the arguments of a command that runs on this machine (an exec without a
// pod, a process) that may name a file of the lab: a script it runs, a config it reads. Each
// is given as the path from the scenario's folder (a process's dir joined in front), and only
// the relative ones: an absolute path names the machine's file (a binary, /etc/hosts), which
// another machine holds otherwise. Nil for other steps. Which of them name a file is known
// when the command runs (commandFileDigests): "-c" or "hello" name none.
//
// An argument is taken whole, and each word in it too (commandWords): a script given to a
// shell (["sh", "-c", "cat conf/limits.txt"]), a flag's value (--config=envoy.yaml), a
// curl's @body.json. So is each word of an exec's stdin (a script piped to sh, python):
// under stdin. Before, a file a script named was kept by no digest, and the record of a
// run of `sh -c "grep -c 503 out.log"` replayed PASSED with out.log edited since. A path a
// script computes ($F, a glob, a file it lists) names no file here, and is not kept.
func commandFiles(params schema.Params) (argv, stdin []string) {
	var args []string
	dir, in := "", ""
	switch p := params.(type) {
	case *schema.Exec:
		if p.InPod() {
			return nil, nil
		}
		args, in = p.Argv, p.Stdin
	case *schema.Process:
		args, dir = p.Argv, p.Dir
	default:
		return nil, nil
	}
	seen := map[string]bool{}
	add := func(out []string, a string) []string {
		if a == "" || filepath.IsAbs(a) || strings.ContainsAny(a, "\n\x00") {
			return out
		}
		if dir != "" && !filepath.IsAbs(dir) {
			a = filepath.Join(dir, a)
		} else if dir != "" {
			return out // a process run in an absolute dir: the machine's
		}
		if a = filepath.Clean(a); !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
		return out
	}
	for _, a := range args {
		argv = add(argv, a)
		for _, w := range commandWords(a) {
			argv = add(argv, w)
		}
	}
	for _, w := range commandWords(in) {
		stdin = add(stdin, w)
	}
	return argv, stdin
}

// commandTemplated says whether the argv, stdin or dir of a command on this machine holds a
// ${...}: its files are known once it is resolved.
func commandTemplated(params schema.Params) bool {
	switch p := params.(type) {
	case *schema.Exec:
		return strings.Contains(strings.Join(p.Argv, " ")+p.Stdin, "${")
	case *schema.Process:
		return strings.Contains(strings.Join(p.Argv, " ")+p.Dir, "${")
	}
	return false
}

// commandWords are the words of s that may be a path: the longest runs of letters, digits and
// . _ - + /, which a shell, a flag or a script's string sets apart ("cat a.txt|wc",
// "--config=a.yaml", "@body.json", "open('a.json')"); one that begins with / or ~ is the
// machine's (~ a run of its own, the rest absolute).
func commandWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-+/", r)
	})
}

// regularFileDigest is fileDigest of path when it is a regular file (not a directory, a
// device, a fifo).
func regularFileDigest(path string) (string, bool) {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	d, err := fileDigest(path)
	return d, err == nil
}

// fileDigest is the digest of the file at path ("sha256:<hex>"), read as a stream: a
// command's argument may name a binary of hundreds of MB (./envoy), which is not held in
// memory to be hashed.
func fileDigest(path string) (string, error) {
	sum, err := FileSHA256(path)
	if err != nil {
		return "", err
	}
	return digestPrefix + sum, nil
}

// FileSHA256 is the SHA-256 of the file at path in hex, read as a stream (a record's seal, a
// command's binary).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// noteCommandFiles notes the digest of each file of the lab a command on this machine names
// as it starts (commandFiles, its ${...} resolved): a script edited since the run, replayed
// as it was, would not do what the run's did. Before, only apply, delete and wait files were
// kept: an exec of check.sh whose script was edited after the run replayed PASSED.
func (ru *run) noteCommandFiles(params schema.Params) {
	argv, stdin := commandFiles(params)
	for _, f := range slices.Concat(argv, stdin) {
		if d, ok := regularFileDigest(ru.file(f)); ok {
			ru.noteDigest(f, d)
			ru.mu.Lock()
			if ru.commandRead == nil {
				ru.commandRead = map[string]bool{}
			}
			ru.commandRead[f] = true
			ru.mu.Unlock()
		}
	}
}

// commandFilesAtEnd gives ChangedDuringRun to each file a command named whose content at the
// end of the run is not the one the command started with: a file it writes (curl -o body.json,
// tee out.txt, a process's --log-file), or a later step wrote. What it holds then says nothing
// of what the command read, and a replay would find the next run's. ru.mu is held.
func (ru *run) commandFilesAtEnd() {
	for f := range ru.commandRead {
		was := ru.fileDigests[f]
		if was == ChangedDuringRun {
			continue
		}
		if d, ok := regularFileDigest(ru.file(f)); !ok || d != was {
			ru.fileDigests[f] = ChangedDuringRun
		}
	}
}
