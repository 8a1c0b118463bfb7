package kube

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSummarizeCall: a failed exec of a stats read printed the URL-encoded filter in every
// layer of client-go's error (4,003 characters once); the summary keeps the method, the path
// without the query, the status and the cause, and the full text stays available.
func TestSummarizeCall(t *testing.T) {
	filter := url.QueryEscape("stats?filter=" + url.QueryEscape(`^cluster\.outbound\|8080\|\|backend\.lab\.svc\.cluster\.local\.`) + "&type=Counters")
	raw := "https://127.0.0.1:6443/api/v1/namespaces/lab/pods/client-7d9/exec?command=pilot-agent&command=request&command=GET&command=" +
		filter + strings.Repeat("&stderr=true&stdout=true", 40)
	u, _ := url.Parse(raw)
	dial := &url.Error{Op: "Post", URL: raw, Err: fmt.Errorf("dial tcp 127.0.0.1:6443: %w", errors.New("connect: connection refused"))}
	long := fmt.Errorf("error dialing backend for %s: %w", raw, dial)

	err := summarizeCall("POST", u, long)
	got := err.Error()
	want := "POST /api/v1/namespaces/lab/pods/client-7d9/exec: connect: connection refused"
	if got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
	if len(long.Error()) < 1000 || len(got) > 200 {
		t.Errorf("the summary (%d chars) should be short and the original (%d) long", len(got), len(long.Error()))
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("the summary does not unwrap to the cause")
	}
	if full := fullErrors(fmt.Errorf("snapshot: %w", errors.Join(err))); !strings.Contains(full, raw) {
		t.Errorf("full text lost: %q", full)
	}

	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods/exec"}, "client-7d9", errors.New("RBAC: access denied"))
	got = summarizeCall("POST", u, fmt.Errorf("upgrade: %w", forbidden)).Error()
	if !strings.HasPrefix(got, "POST /api/v1/namespaces/lab/pods/client-7d9/exec: 403 Forbidden: ") || !strings.Contains(got, "access denied") {
		t.Errorf("forbidden summary: %s", got)
	}

	if s := stripQueries(`Post "` + raw + `": EOF`); strings.Contains(s, "command=") || !strings.Contains(s, "/exec") {
		t.Errorf("stripQueries: %s", s)
	}
}
