// Package lsptest is a scripted Language Server Protocol client for tests: it talks to a
// server as an editor does (initialize, didOpen, didChange, completion, hover, definition,
// code actions) over JSON-RPC, and collects the diagnostics the server publishes.
package lsptest

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// Client is one editor session.
type Client struct {
	t    testing.TB
	conn *jsonrpc2.Conn
	mu   sync.Mutex
	// published are the diagnostics published so far, in order; arrived wakes waiters.
	published []Published
	arrived   chan struct{}
	versions  map[string]int32
}

// Published is one publishDiagnostics notification and when it arrived.
type Published struct {
	protocol.PublishDiagnosticsParams
	At time.Time
}

// Connect talks to the server on rwc.
func Connect(t testing.TB, rwc io.ReadWriteCloser) *Client {
	c := &Client{t: t, arrived: make(chan struct{}), versions: map[string]int32{}}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(c.handle))
	t.Cleanup(func() { _ = c.conn.Close() })
	return c
}

// Pipe connects a client to serve, run in its own goroutine on an in-memory stream.
func Pipe(t testing.TB, serve func(ctx context.Context, rwc io.ReadWriteCloser) error) *Client {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serve(ctx, pipe{sr, sw})
	}()
	c := Connect(t, pipe{cr, cw})
	t.Cleanup(func() {
		cancel()
		_ = cw.Close()
		_ = sw.Close()
		<-done
	})
	return c
}

type pipe struct {
	*io.PipeReader
	*io.PipeWriter
}

func (p pipe) Close() error {
	_ = p.PipeReader.Close()
	return p.PipeWriter.Close()
}

func (c *Client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method == protocol.ServerTextDocumentPublishDiagnostics && req.Params != nil {
		var p protocol.PublishDiagnosticsParams
		if err := json.Unmarshal(*req.Params, &p); err == nil {
			// glsp's IntegerOrString decodes into a copy of itself (its UnmarshalJSON has a
			// value receiver): a diagnostic's code arrives empty. Read the codes again.
			var codes struct{ Diagnostics []struct{ Code any } }
			if json.Unmarshal(*req.Params, &codes) == nil && len(codes.Diagnostics) == len(p.Diagnostics) {
				for i, d := range codes.Diagnostics {
					if d.Code != nil {
						p.Diagnostics[i].Code = &protocol.IntegerOrString{Value: d.Code}
					}
				}
			}
			c.mu.Lock()
			c.published = append(c.published, Published{p, time.Now()})
			close(c.arrived)
			c.arrived = make(chan struct{})
			c.mu.Unlock()
		}
	}
	return nil, nil
}

// Call makes a request and decodes its result into result.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// Initialize starts the session on the folder root.
func (c *Client) Initialize(rootURI string) protocol.InitializeResult {
	c.t.Helper()
	var res protocol.InitializeResult
	if err := c.Call(protocol.MethodInitialize, map[string]any{"processId": nil, "rootUri": rootURI, "capabilities": map[string]any{}}, &res); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.Notify(protocol.MethodInitialized, map[string]any{})
	return res
}

// Open opens a document with its text.
func (c *Client) Open(uri, text string) {
	c.mu.Lock()
	c.versions[uri] = 1
	c.mu.Unlock()
	c.Notify(protocol.MethodTextDocumentDidOpen, protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: uri, LanguageID: "cue", Version: 1, Text: text}})
}

// Change edits a document: the text in r replaced by text (r nil: the whole document). It
// returns the document's new version.
func (c *Client) Change(uri string, r *protocol.Range, text string) int32 {
	c.mu.Lock()
	c.versions[uri]++
	v := c.versions[uri]
	c.mu.Unlock()
	c.Notify(protocol.MethodTextDocumentDidChange, map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{protocol.TextDocumentContentChangeEvent{Range: r, Text: text}},
	})
	return v
}

// Save says the document was saved.
func (c *Client) Save(uri string) {
	c.Notify(protocol.MethodTextDocumentDidSave, protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}})
}

// Close closes a document.
func (c *Client) Close(uri string) {
	c.Notify(protocol.MethodTextDocumentDidClose, protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri}})
}

// Diagnostics waits up to timeout for diagnostics of uri published after the n-th
// publication (Count) and accepted by ok (nil: any), and returns the first such.
func (c *Client) Diagnostics(uri string, after int, timeout time.Duration, ok func(Published) bool) (Published, bool) {
	deadline := time.After(timeout)
	for i := after; ; {
		c.mu.Lock()
		for ; i < len(c.published); i++ {
			if p := c.published[i]; p.URI == uri && (ok == nil || ok(p)) {
				c.mu.Unlock()
				return p, true
			}
		}
		arrived := c.arrived
		c.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline:
			return Published{}, false
		}
	}
}

// Count is how many publications have arrived.
func (c *Client) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.published)
}

// Completion asks for completion at a position.
func (c *Client) Completion(uri string, line, char int) protocol.CompletionList {
	c.t.Helper()
	var res protocol.CompletionList
	if err := c.Call(protocol.MethodTextDocumentCompletion, position(uri, line, char), &res); err != nil {
		c.t.Fatalf("completion: %v", err)
	}
	return res
}

// Hover asks for a hover at a position (nil: none).
func (c *Client) Hover(uri string, line, char int) *protocol.Hover {
	c.t.Helper()
	var res *protocol.Hover
	if err := c.Call(protocol.MethodTextDocumentHover, position(uri, line, char), &res); err != nil {
		c.t.Fatalf("hover: %v", err)
	}
	return res
}

// Definition asks where the name at a position is defined.
func (c *Client) Definition(uri string, line, char int) []protocol.Location {
	c.t.Helper()
	var res []protocol.Location
	if err := c.Call(protocol.MethodTextDocumentDefinition, position(uri, line, char), &res); err != nil {
		c.t.Fatalf("definition: %v", err)
	}
	return res
}

// CodeActions asks for the actions that fix diagnostics.
func (c *Client) CodeActions(uri string, diags []protocol.Diagnostic) []protocol.CodeAction {
	c.t.Helper()
	var res []protocol.CodeAction
	r := protocol.Range{}
	if len(diags) > 0 {
		r = diags[0].Range
	}
	params := map[string]any{"textDocument": map[string]any{"uri": uri}, "range": r, "context": map[string]any{"diagnostics": diags}}
	if err := c.Call(protocol.MethodTextDocumentCodeAction, params, &res); err != nil {
		c.t.Fatalf("codeAction: %v", err)
	}
	return res
}

// Shutdown ends the session as an editor does.
func (c *Client) Shutdown() {
	c.t.Helper()
	if err := c.Call(protocol.MethodShutdown, nil, nil); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	_ = c.conn.Notify(context.Background(), protocol.MethodExit, nil)
}

func position(uri string, line, char int) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": char}}
}
