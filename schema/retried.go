package schema

import "context"

type retriedKey struct{}

// WithRetriedAnswers returns ctx carrying note, which a driver calls with each answer its
// client retries without returning it (an API server's 429 Too Many Requests): the step whose
// Run ctx is given to says so (NoteRetriedAnswer). When its time runs out while the client
// waits to retry, its error is the timeout alone, which does not say the server was refusing.
func WithRetriedAnswers(ctx context.Context, note func(string)) context.Context {
	return context.WithValue(ctx, retriedKey{}, note)
}

// NoteRetriedAnswer tells the step whose ctx it is of an answer its client retries; nothing
// when no one asked (a driver called outside a step).
func NoteRetriedAnswer(ctx context.Context, msg string) {
	if note, _ := ctx.Value(retriedKey{}).(func(string)); note != nil {
		note(msg)
	}
}
