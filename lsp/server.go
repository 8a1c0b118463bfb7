// Package lsp is labrun's language server (labrun lsp): the Language Server Protocol over a
// stream (the CLI gives it stdin and stdout), with the protocol's types and dispatch from
// github.com/tliron/glsp and JSON-RPC from github.com/sourcegraph/jsonrpc2.
//
// What it serves:
//   - diagnostics: on open, change and save, the checks of `labrun vet FILE` on the document,
//     with the editor's unsaved buffers in place of the files on disk, every problem and
//     warning at its range, with related information where a problem names a second place;
//   - completion inside expressions (expect, assert, until) and ${...}: the names a step can
//     read at its point of the timeline, their typed result fields, stat names of the source's
//     catalogue, vars, functions; outside them, step kinds and the fields of the schema;
//   - hover on a name of an expression (its type, the step it comes from, when it exists),
//     definition (the step), and code actions that apply a problem's "did you mean".
//
// The checks are not made here: Options.Check makes them, and the CLI gives it what vet
// runs, so that the editor and vet never disagree. Nothing here touches the process's files,
// streams or environment.
package lsp

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
)

// Options configure a Server.
type Options struct {
	// Check makes vet's checks of the file at path (absolute), reading the documents of
	// overlay (absolute path → content) instead of the files on disk.
	Check func(path string, overlay map[string][]byte) *Report
	// ReadFile reads a file that is not open in the editor (a problem's other file).
	ReadFile func(path string) ([]byte, error)
	// Log receives what the server says about itself (JSON-RPC trouble); nil: nothing.
	Log io.Writer
	// Delay is how long a document must stay unchanged before it is checked again (0: 150 ms);
	// opening and saving check at once.
	Delay time.Duration
	// Version is the server's version, as initialize reports it.
	Version string
	// Values, when set, completes inside a plain string of a step kind's field (kind "config",
	// field "path", what is written so far, and the other fields the step's struct has, e.g.
	// "cluster"): the values the field can take, e.g. a config path checked against Envoy's
	// types. Nil: no completion there.
	Values func(kind, field, written string, siblings map[string]bool) []string
}

// Report is what a check found, positions absolute.
type Report struct {
	// Problems are vet's errors.
	Problems dsl.Errors
	// Warnings are vet's warnings (the lints).
	Warnings []*dsl.Warning
	// Skipped are the files left out of loading, each with why (warnings).
	Skipped dsl.Errors
	// Scenarios are the file's scenarios, those with problems too (decoded as far as they
	// went): what completion, hover and definition read.
	Scenarios []*dsl.Scenario
	// Failed is a check that could not be made at all (not a problem of the spec).
	Failed error
}

// Server is one language server connection's state.
type Server struct {
	opts    Options
	handler protocol.Handler
	conn    *jsonrpc2.Conn

	mu sync.Mutex
	// docs are the open documents, by path.
	docs map[string]*document
	// results are the diagnostics of each checked document's last check, by file.
	results map[string]map[string][]protocol.Diagnostic
	// pending are the documents to check, each with when.
	pending map[string]time.Time
	wake    chan struct{}
	// docsOfSchema are the schema's field docs (schemaDocs), made at the first completion.
	schemaOnce sync.Once
	schema     *schemaDocs
}

// document is an open document.
type document struct {
	uri     string
	path    string
	version int32
	text    *text
	// checked is the version whose check has finished (-1: none yet); waiters wait for it.
	checked int32
	waiters []chan struct{}
	// scenarios are the last check's scenarios that decoded (kept while the text does not
	// build), and checkedText the text they were decoded from.
	scenarios   []*dsl.Scenario
	checkedText *text
}

// New returns a server with opts.
func New(opts Options) *Server {
	if opts.Delay == 0 {
		opts.Delay = 150 * time.Millisecond
	}
	s := &Server{opts: opts, docs: map[string]*document{}, results: map[string]map[string][]protocol.Diagnostic{},
		pending: map[string]time.Time{}, wake: make(chan struct{}, 1)}
	s.handler = protocol.Handler{
		Initialize:             s.initialize,
		Initialized:            func(*glsp.Context, *protocol.InitializedParams) error { return nil },
		Shutdown:               func(*glsp.Context) error { return nil },
		Exit:                   func(*glsp.Context) error { return nil },
		SetTrace:               func(*glsp.Context, *protocol.SetTraceParams) error { return nil },
		CancelRequest:          func(*glsp.Context, *protocol.CancelParams) error { return nil },
		TextDocumentDidOpen:    s.didOpen,
		TextDocumentDidChange:  s.didChange,
		TextDocumentDidSave:    s.didSave,
		TextDocumentDidClose:   s.didClose,
		TextDocumentCompletion: s.completion,
		TextDocumentHover:      s.hover,
		TextDocumentDefinition: s.definition,
		TextDocumentCodeAction: s.codeAction,
		WorkspaceDidChangeWatchedFiles: func(*glsp.Context, *protocol.DidChangeWatchedFilesParams) error {
			s.recheckAll()
			return nil
		},
		WorkspaceDidChangeConfiguration: func(*glsp.Context, *protocol.DidChangeConfigurationParams) error { return nil },
	}
	return s
}

// Serve answers the client on rwc until it exits, the stream ends or ctx is done.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var opts []jsonrpc2.ConnOpt
	logger := &logWriter{w: s.opts.Log}
	opts = append(opts, jsonrpc2.SetLogger(logger))
	s.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(s.handle), opts...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.checker(ctx)
	}()
	<-s.conn.DisconnectNotify()
	cancel()
	<-done
	return nil
}

// logWriter is the connection's logger: lines to Options.Log.
type logWriter struct{ w io.Writer }

func (l *logWriter) Printf(format string, args ...any) {
	if l.w != nil {
		fmt.Fprintf(l.w, "labrun lsp: "+strings.TrimSuffix(format, "\n")+"\n", args...)
	}
}

// handle dispatches a request or notification to glsp's handler and turns its answer into
// JSON-RPC's.
func (s *Server) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	gc := &glsp.Context{
		Method: req.Method,
		Notify: func(method string, params any) { _ = conn.Notify(ctx, method, params) },
		Call:   func(method string, params, result any) { _ = conn.Call(ctx, method, params, result) },
	}
	if req.Params != nil {
		gc.Params = *req.Params
	}
	r, validMethod, validParams, err := s.handler.Handle(gc)
	switch {
	case req.Method == protocol.MethodExit:
		return nil, conn.Close()
	case !validMethod:
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not supported: " + req.Method}
	case !validParams:
		msg := "invalid params"
		if err != nil {
			msg = err.Error()
		}
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: msg}
	case err != nil:
		return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidRequest, Message: err.Error()}
	}
	return r, nil
}

func (s *Server) initialize(_ *glsp.Context, _ *protocol.InitializeParams) (any, error) {
	change := protocol.TextDocumentSyncKindIncremental
	yes := true
	quickfix := []protocol.CodeActionKind{protocol.CodeActionKindQuickFix}
	version := s.opts.Version
	return protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: protocol.TextDocumentSyncOptions{OpenClose: &yes, Change: &change, Save: protocol.SaveOptions{IncludeText: &yes}},
			CompletionProvider: &protocol.CompletionOptions{
				TriggerCharacters: []string{".", "\"", "{", "$", "(", " "},
			},
			HoverProvider:      true,
			DefinitionProvider: true,
			CodeActionProvider: protocol.CodeActionOptions{CodeActionKinds: quickfix},
		},
		ServerInfo: &protocol.InitializeResultServerInfo{Name: "labrun", Version: &version},
	}, nil
}

// pathOf is the file path of a file: URI ("" for any other scheme).
func pathOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// uriOf is the file: URI of a path.
func uriOf(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// checkable reports whether labrun checks a file of this name.
func checkable(path string) bool {
	return strings.HasSuffix(path, ".cue") || dsl.IsMarkdown(path)
}

// inCueMod reports whether path is inside a cue.mod directory: a CUE module's metadata and
// vendored packages (labrun init's copy of the schema), never scenarios.
func inCueMod(path string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(path)), "/"), "cue.mod")
}

func (s *Server) didOpen(_ *glsp.Context, p *protocol.DidOpenTextDocumentParams) error {
	path := pathOf(p.TextDocument.URI)
	if path == "" || !checkable(path) {
		return nil
	}
	s.mu.Lock()
	s.docs[path] = &document{uri: p.TextDocument.URI, path: path, version: p.TextDocument.Version, text: newText(p.TextDocument.Text), checked: -1}
	s.mu.Unlock()
	s.schedule(path, 0)
	return nil
}

func (s *Server) didChange(_ *glsp.Context, p *protocol.DidChangeTextDocumentParams) error {
	path := pathOf(p.TextDocument.URI)
	s.mu.Lock()
	d := s.docs[path]
	if d == nil {
		s.mu.Unlock()
		return nil
	}
	src := d.text.src
	for _, c := range p.ContentChanges {
		src = apply(src, c)
	}
	d.text, d.version = newText(src), p.TextDocument.Version
	s.mu.Unlock()
	s.scheduleDir(path, s.opts.Delay)
	return nil
}

func (s *Server) didSave(_ *glsp.Context, p *protocol.DidSaveTextDocumentParams) error {
	path := pathOf(p.TextDocument.URI)
	s.mu.Lock()
	d := s.docs[path]
	if d != nil && p.Text != nil && *p.Text != d.text.src {
		d.text = newText(*p.Text)
	}
	s.mu.Unlock()
	if d != nil {
		s.scheduleDir(path, 0)
	} else if path != "" {
		// A file the server does not check, saved (an apply's YAML, when the editor sends
		// its saves): a step may read it, and its problems are the open documents' checks'.
		s.recheckAll()
	}
	return nil
}

func (s *Server) didClose(_ *glsp.Context, p *protocol.DidCloseTextDocumentParams) error {
	path := pathOf(p.TextDocument.URI)
	s.mu.Lock()
	d := s.docs[path]
	delete(s.docs, path)
	delete(s.pending, path)
	old := s.results[path]
	delete(s.results, path)
	if d != nil {
		d.release()
	}
	s.mu.Unlock()
	// Its problems go with it; the other open documents of its directory read the file
	// from disk now.
	s.republish(old, nil)
	s.scheduleDir(path, 0)
	return nil
}

// schedule checks path after delay (replacing an earlier schedule).
func (s *Server) schedule(path string, delay time.Duration) {
	s.mu.Lock()
	s.pending[path] = time.Now().Add(delay)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// scheduleDir checks path and every other open document of its directory after delay: a
// CUE package is its directory's files, so a change of one can change the others' problems.
func (s *Server) scheduleDir(path string, delay time.Duration) {
	s.scheduleOpen(delay, func(p string) bool { return p == path || filepath.Dir(p) == filepath.Dir(path) })
}

// recheckAll checks every open document again (files changed on disk).
func (s *Server) recheckAll() {
	s.scheduleOpen(s.opts.Delay, func(string) bool { return true })
}

// scheduleOpen checks the open documents that match after delay.
func (s *Server) scheduleOpen(delay time.Duration, match func(path string) bool) {
	s.mu.Lock()
	var paths []string
	for p := range s.docs {
		if match(p) {
			paths = append(paths, p)
		}
	}
	s.mu.Unlock()
	for _, p := range paths {
		s.schedule(p, delay)
	}
}

// checker checks the pending documents one at a time, each when its time has come, until ctx
// is done. One at a time: a check is CPU-bound, and loading tunes the process's collector.
func (s *Server) checker(ctx context.Context) {
	for {
		s.mu.Lock()
		next, due := "", time.Time{}
		for p, t := range s.pending {
			if next == "" || t.Before(due) || t.Equal(due) && p < next {
				next, due = p, t
			}
		}
		s.mu.Unlock()
		if next == "" {
			select {
			case <-s.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		if d := time.Until(due); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-s.wake:
				timer.Stop()
			case <-ctx.Done():
				timer.Stop()
				return
			}
			continue
		}
		s.mu.Lock()
		delete(s.pending, next)
		d := s.docs[next]
		overlay := map[string][]byte{}
		texts := map[string]*text{}
		for p, od := range s.docs {
			overlay[p] = []byte(od.text.src)
			texts[p] = od.text
		}
		var version int32
		if d != nil {
			version = d.version
		}
		s.mu.Unlock()
		if d == nil {
			continue // closed meanwhile
		}
		rep := s.check(next, overlay)
		s.finish(ctx, next, version, texts, rep)
	}
}

// check runs Options.Check, turning a panic into a failed check: a bug of labrun's must not
// end the editor's session.
func (s *Server) check(path string, overlay map[string][]byte) (rep *Report) {
	defer func() {
		if r := recover(); r != nil {
			rep = &Report{Failed: fmt.Errorf("labrun's check failed (a bug of labrun's, please report it): %v", r)}
		}
	}()
	if inCueMod(path) {
		return &Report{} // CUE's module files, no lab: nothing of labrun's to check
	}
	rep = s.opts.Check(path, overlay)
	if rep == nil {
		rep = &Report{}
	}
	return rep
}

// finish publishes what the check of path (at version, of the texts) found, and keeps its
// scenarios for completion.
func (s *Server) finish(ctx context.Context, path string, version int32, texts map[string]*text, rep *Report) {
	diags := s.diagnostics(path, texts, rep)
	s.mu.Lock()
	d := s.docs[path]
	if d == nil || d.version != version {
		// Changed or closed while it was checked: a newer check is pending, or nothing is.
		s.mu.Unlock()
		return
	}
	old := s.results[path]
	s.results[path] = diags
	d.checked = version
	if len(rep.Scenarios) > 0 {
		d.scenarios, d.checkedText = rep.Scenarios, texts[path]
	}
	d.release()
	s.mu.Unlock()
	s.republish(old, diags)
	_ = ctx
}

// release wakes those waiting for the document's check.
func (d *document) release() {
	for _, w := range d.waiters {
		close(w)
	}
	d.waiters = nil
}

// republish sends the diagnostics of every file named by old or now: for each, the union of
// what every open document's last check found there.
func (s *Server) republish(old, now map[string][]protocol.Diagnostic) {
	files := map[string]bool{}
	for f := range old {
		files[f] = true
	}
	for f := range now {
		files[f] = true
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		s.mu.Lock()
		list := []protocol.Diagnostic{}
		seen := map[string]bool{}
		var checked []string
		for p := range s.results {
			checked = append(checked, p)
		}
		sort.Strings(checked)
		for _, p := range checked {
			for _, dg := range s.results[p][f] {
				key := fmt.Sprintf("%d:%d:%d:%d:%s", dg.Range.Start.Line, dg.Range.Start.Character, dg.Range.End.Line, dg.Range.End.Character, dg.Message)
				if !seen[key] {
					seen[key] = true
					list = append(list, dg)
				}
			}
		}
		params := protocol.PublishDiagnosticsParams{URI: uriOf(f), Diagnostics: list}
		if d := s.docs[f]; d != nil {
			v := protocol.UInteger(d.checked)
			if d.checked >= 0 {
				params.Version = &v
			}
		}
		s.mu.Unlock()
		if s.conn != nil {
			_ = s.conn.Notify(context.Background(), protocol.ServerTextDocumentPublishDiagnostics, params)
		}
	}
}

// analysis is what completion, hover and definition read of a document: its text now, and
// the scenarios of its last check that decoded with the text they came from. It waits (up to
// wait) for the check of the current version, so that a request right after a change sees it.
func (s *Server) analysis(uri string, wait time.Duration) (*document, *text, []*dsl.Scenario, *text) {
	path := pathOf(uri)
	s.mu.Lock()
	d := s.docs[path]
	if d == nil {
		s.mu.Unlock()
		return nil, nil, nil, nil
	}
	if d.checked != d.version {
		ch := make(chan struct{})
		d.waiters = append(d.waiters, ch)
		s.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-ch:
		case <-timer.C:
		}
		timer.Stop()
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	return d, d.text, d.scenarios, d.checkedText
}
