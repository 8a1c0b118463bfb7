package didyoumean

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"max_connections", "max_pending_requests", "max_requests", "max_retries"}
	for _, tt := range []struct{ s, want string }{
		{"max_conections", "max_connections"},
		{"MAX_RETRIES", "max_retries"},
		{"max_reqeusts", "max_requests"}, // a swap is one edit
		{"priority", ""},                 // nothing near
	} {
		if got := Closest(tt.s, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	if d := Distance("godo", "good"); d != 1 {
		t.Errorf("Distance(godo, good) = %d, want 1", d)
	}
}
