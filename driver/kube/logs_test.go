package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"labrun.dev/labrun/schema"
)

// TestLogsBySelectorReadsEveryPod: as `kubectl logs -l` does, a logs read by selector reads
// the log of every pod the selector matches whose container has started, merged in time
// order, each line with its pod. It read one (the first ready by name): "no replica logged a
// 503" passed with the 503 in another replica's log. The API server is a loopback stand-in.
func TestLogsBySelectorReadsEveryPod(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(name string, state corev1.ContainerState) corev1.Pod {
		return corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "lab", Labels: map[string]string{"app": "backend"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "istio-proxy", State: state}}},
		}
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{
		pod("backend-c", running), pod("backend-a", running), pod("backend-b", running),
		pod("backend-d", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}),
	}}
	logs := map[string]string{
		"backend-a": "2026-07-05T10:00:01.000000000Z a1\n2026-07-05T10:00:04.000000000Z a4\n",
		"backend-b": "2026-07-05T10:00:02.000000000Z b2\n",
		"backend-c": "2026-07-05T10:00:00.500000000Z c0\n2026-07-05T10:00:03.000000000Z \"GET / HTTP/1.1\" 503 UO\n",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/namespaces/lab/pods":
			if got := r.URL.Query().Get("labelSelector"); got != "app=backend" {
				t.Errorf("labelSelector %q", got)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(list)
		case strings.HasSuffix(r.URL.Path, "/log"):
			name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/lab/pods/"), "/log")
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, logs[name])
		case r.URL.Path == "/api/v1/namespaces/lab/pods/backend-b":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(list.Items[2])
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	d := standinDriver(t, srv.URL)
	var sources []string
	from := schema.LogSince{Time: time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC), Sources: func(p []string) { sources = p }}
	var got []string
	err := d.Logs(context.Background(), schema.Logs{PodRef: schema.PodRef{Selector: "app=backend"}}, from, func(l schema.LogLine) {
		got = append(got, l.Pod+": "+l.Text)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"backend-c: c0", "backend-a: a1", "backend-b: b2", `backend-c: "GET / HTTP/1.1" 503 UO`, "backend-a: a4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n got %q\nwant %q", got, want)
	}
	if want := []string{"backend-a", "backend-b", "backend-c"}; !reflect.DeepEqual(sources, want) {
		t.Errorf("sources %q, want %q (the pod whose container has not started is left out)", sources, want)
	}

	// By name: that pod's log, its lines with its name.
	got, sources = nil, nil
	err = d.Logs(context.Background(), schema.Logs{PodRef: schema.PodRef{Pod: "backend-b"}}, from, func(l schema.LogLine) {
		got = append(got, l.Pod+": "+l.Text)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"backend-b: b2"}; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(sources, []string{"backend-b"}) {
		t.Errorf("by name: lines %q, sources %q", got, sources)
	}
}

// TestLogsOfARestartedContainer: a container that restarted since the mark wrote lines in
// its previous instance too, which the API serves only when asked for (previous=true); read
// without them, "no line says 503" passed with the 503 in the log of the instance that
// crashed. Where an instance before the previous one may have written lines since the mark,
// which the kubelet no longer keeps, the read errs. The API server is a loopback stand-in.
func TestLogsOfARestartedContainer(t *testing.T) {
	mark := time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(mark.Add(time.Duration(s) * time.Second)) }
	terminated := func(start, end int) *corev1.ContainerStateTerminated {
		return &corev1.ContainerStateTerminated{ExitCode: 1, StartedAt: at(start), FinishedAt: at(end)}
	}
	running := func(start int) corev1.ContainerState {
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(start)}}
	}
	const previousLog = "2026-07-05T10:00:02.000000000Z \"GET / HTTP/1.1\" 503 UO\n"
	const currentLog = "2026-07-05T10:00:06.000000000Z \"GET / HTTP/1.1\" 200 -\n"
	for _, c := range []struct {
		name     string
		restarts int32
		state    corev1.ContainerState
		last     *corev1.ContainerStateTerminated
		want     []string // the lines read; nil: an error
		wantErr  string
	}{
		{"restarted once since the mark", 1, running(5), terminated(-60, 4),
			[]string{`"GET / HTTP/1.1" 503 UO`, `"GET / HTTP/1.1" 200 -`}, ""},
		{"restarted before the mark", 1, running(-5), terminated(-60, -6),
			[]string{`"GET / HTTP/1.1" 200 -`}, ""},
		{"never restarted", 0, running(-60), nil,
			[]string{`"GET / HTTP/1.1" 200 -`}, ""},
		{"restarted 3 times, the last ended instance started before the mark", 3, running(5), terminated(-1, 4),
			[]string{`"GET / HTTP/1.1" 503 UO`, `"GET / HTTP/1.1" 200 -`}, ""},
		{"restarted 3 times since the mark", 3, running(5), terminated(3, 4),
			nil, "restarted 3 times, and the oldest instance whose log the kubelet keeps started at 2026-07-05T10:00:03Z, after the mark"},
		{"waiting to start again, the one before the last ended after the mark", 2, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, terminated(3, 4),
			nil, "restarted 2 times"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "backend-a", Namespace: "lab"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
					Name: "istio-proxy", State: c.state, RestartCount: c.restarts,
					LastTerminationState: corev1.ContainerState{Terminated: c.last}}}},
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/namespaces/lab/pods/backend-a":
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(pod)
				case "/api/v1/namespaces/lab/pods/backend-a/log":
					w.Header().Set("Content-Type", "text/plain")
					if r.URL.Query().Get("previous") == "true" {
						fmt.Fprint(w, previousLog)
					} else {
						fmt.Fprint(w, currentLog)
					}
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			d := standinDriver(t, srv.URL)
			var got []string
			err := d.Logs(context.Background(), schema.Logs{PodRef: schema.PodRef{Pod: "backend-a"}}, schema.LogSince{Time: mark.Add(time.Second / 2)}, func(l schema.LogLine) {
				got = append(got, l.Text)
			})
			if !logsErrAsWanted(t, err, c.wantErr, got) {
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("lines\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// logsErrAsWanted fails t unless a read's err is as wanted: one with wantErr in it, or none
// when wantErr is ""; it says whether the lines are to be checked (no error was wanted).
func logsErrAsWanted(t *testing.T, err error, wantErr string, got []string) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want one with %q (lines %q)", err, wantErr, got)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// standinDriver is a driver whose API server is the loopback stand-in at url, namespace lab.
func standinDriver(t *testing.T, url string) *driver {
	t.Helper()
	cs, err := newClients(&rest.Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	return &driver{namespace: "lab", cs: cs, streamCS: cs, logf: t.Logf, opts: Options{WaitTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second}}
}

// TestLogsOfAPodGoneSinceTheMark: a pod the read named at its mark that is deleted, or
// replaced by another of its name (a StatefulSet's), by the read wrote lines since the mark
// that cannot be read: the read errs. It read the pods there at the read alone, and "no 503
// since the mark" passed after the pod that logged the 503 was killed. A pod that came since
// is read as before. The API server is a loopback stand-in (the driver's clients are REST
// clients, not client-go's clientset, so its fake clientset cannot stand in for them).
func TestLogsOfAPodGoneSinceTheMark(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(name, uid string) corev1.Pod {
		return corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "lab", UID: types.UID(uid), Labels: map[string]string{"app": "backend"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "istio-proxy", State: running}}},
		}
	}
	for _, c := range []struct {
		name        string
		ref         schema.PodRef
		atMark, now []corev1.Pod
		wantErr     string // "": the read reads the pods there now
	}{
		{"a pod deleted since", schema.PodRef{Selector: "app=backend"},
			[]corev1.Pod{pod("backend-a", "1"), pod("backend-b", "2")}, []corev1.Pod{pod("backend-b", "2")},
			"lab/backend-a was deleted since"},
		{"a pod replaced by one of another name", schema.PodRef{Selector: "app=backend"},
			[]corev1.Pod{pod("backend-a", "1"), pod("backend-b", "2")}, []corev1.Pod{pod("backend-b", "2"), pod("backend-c", "3")},
			"lab/backend-a was deleted since"},
		{"a pod replaced by one of its name", schema.PodRef{Selector: "app=backend"},
			[]corev1.Pod{pod("backend-0", "1")}, []corev1.Pod{pod("backend-0", "9")},
			"lab/backend-0 was replaced by another pod of its name since"},
		{"a pod by name replaced by one of its name", schema.PodRef{Pod: "backend-0"},
			[]corev1.Pod{pod("backend-0", "1")}, []corev1.Pod{pod("backend-0", "9")},
			"lab/backend-0 was replaced by another pod of its name since"},
		{"a pod added since", schema.PodRef{Selector: "app=backend"},
			[]corev1.Pod{pod("backend-a", "1")}, []corev1.Pod{pod("backend-a", "1"), pod("backend-b", "2")}, ""},
		{"the same pods", schema.PodRef{Selector: "app=backend"},
			[]corev1.Pod{pod("backend-a", "1")}, []corev1.Pod{pod("backend-a", "1")}, ""},
		{"a pod by name not there at the mark", schema.PodRef{Pod: "backend-0"},
			nil, []corev1.Pod{pod("backend-0", "9")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pods := c.atMark
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/lab/pods/")
				switch {
				case r.URL.Path == "/api/v1/namespaces/lab/pods":
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: pods})
				case strings.HasSuffix(r.URL.Path, "/log"):
					w.Header().Set("Content-Type", "text/plain")
					fmt.Fprintf(w, "2026-07-05T10:00:02.000000000Z %s\n", strings.TrimSuffix(name, "/log"))
				default:
					for _, p := range pods {
						if p.Name == name {
							w.Header().Set("Content-Type", "application/json")
							_ = json.NewEncoder(w).Encode(p)
							return
						}
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusNotFound)
					_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
				}
			}))
			defer srv.Close()
			d := standinDriver(t, srv.URL)
			mark, err := d.MarkPods(context.Background(), c.ref)
			if err != nil {
				t.Fatal(err)
			}
			pods = c.now
			var got []string
			from := schema.LogSince{Time: time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC), Pods: &mark}
			err = d.Logs(context.Background(), schema.Logs{PodRef: c.ref}, from, func(l schema.LogLine) { got = append(got, l.Text) })
			if !logsErrAsWanted(t, err, c.wantErr, got) {
				return
			}
			var want []string
			for _, p := range c.now {
				want = append(want, p.Name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("lines %q, want %q", got, want)
			}
		})
	}
}

// TestLogsOfAPodThatCameAndWentSinceTheMark: a pod the selector matched only after the mark
// and that was deleted before the read wrote lines since the mark that neither the mark nor the
// read lists: the read errs, naming it. Without the watch from the mark, "no 503 since the
// mark" passed when a pod that came (a replacement) logged the 503 and was killed in turn. A
// watch the API server refuses leaves the read as before, the mark saying why it lost track
// (the run warns). The API server is a loopback stand-in serving a list and a watch.
func TestLogsOfAPodThatCameAndWentSinceTheMark(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pod := func(name, uid string) corev1.Pod {
		return corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "lab", UID: types.UID(uid), ResourceVersion: "10", Labels: map[string]string{"app": "backend"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "istio-proxy", State: running}}},
		}
	}
	pending := func(name, uid string) corev1.Pod {
		p := pod(name, uid)
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		return p
	}
	relabelled := func(name, uid string) *corev1.Pod {
		p := pod(name, uid)
		p.Labels = map[string]string{"app": "canary"}
		return &p
	}
	event := func(typ string, p corev1.Pod) metav1.WatchEvent {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}}
	}
	// Each watch ends with backend-z coming (and staying): once the mark has seen it, it
	// has seen the events before it.
	last := pod("backend-z", "9")
	for _, c := range []struct {
		name    string
		events  []metav1.WatchEvent // nil: the watch is refused
		now     []corev1.Pod
		wantErr string
		byName  *corev1.Pod // what a GET of its name answers, outside the selector; others are not found
	}{
		{"a pod that came and went", []metav1.WatchEvent{event("ADDED", pod("backend-b", "2")), event("DELETED", pod("backend-b", "2"))},
			[]corev1.Pod{pod("backend-a", "1"), last}, "lab/backend-b came after the mark and was deleted since", nil},
		{"a pod that came and went, its name back", []metav1.WatchEvent{event("ADDED", pod("backend-0", "2")), event("DELETED", pod("backend-0", "2")), event("ADDED", pod("backend-0", "3"))},
			[]corev1.Pod{pod("backend-a", "1"), pod("backend-0", "3"), last}, "lab/backend-0 came after the mark and was deleted since", nil},
		// The API server sends a pod relabelled out of a watch's selector as DELETED, the
		// object as it was before (apiserver's cacheWatcher): the pod is still there by name.
		{"a pod that came and was relabelled", []metav1.WatchEvent{event("ADDED", pod("backend-b", "2")), event("DELETED", pod("backend-b", "2"))},
			[]corev1.Pod{pod("backend-a", "1"), last}, "lab/backend-b came after the mark and left the selector (relabelled) since", relabelled("backend-b", "2")},
		{"a pod there at the mark, relabelled", []metav1.WatchEvent{event("DELETED", pod("backend-a", "1"))},
			[]corev1.Pod{last}, "lab/backend-a left the selector (relabelled) since", relabelled("backend-a", "1")},
		{"a pod there at the mark, deleted and its name back", []metav1.WatchEvent{event("DELETED", pod("backend-a", "1"))},
			[]corev1.Pod{last}, "lab/backend-a was deleted since", relabelled("backend-a", "7")},
		{"a pod that came and is there", []metav1.WatchEvent{event("ADDED", pod("backend-b", "2"))},
			[]corev1.Pod{pod("backend-a", "1"), pod("backend-b", "2"), last}, "", nil},
		{"a pod that came and went before a container started", []metav1.WatchEvent{event("ADDED", pending("backend-b", "2")), event("DELETED", pending("backend-b", "2"))},
			[]corev1.Pod{pod("backend-a", "1"), last}, "", nil},
		{"a pod there at the mark, changed", []metav1.WatchEvent{event("MODIFIED", pod("backend-a", "1"))},
			[]corev1.Pod{pod("backend-a", "1"), last}, "", nil},
		{"a watch refused", nil, []corev1.Pod{pod("backend-a", "1")}, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			pods := []corev1.Pod{pod("backend-a", "1")}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/lab/pods/")
				switch {
				case r.URL.Path == "/api/v1/namespaces/lab/pods" && r.URL.Query().Get("watch") == "true":
					if c.events == nil {
						w.WriteHeader(http.StatusForbidden)
						return
					}
					if rv := r.URL.Query().Get("resourceVersion"); rv != "10" {
						t.Errorf("the watch starts at resource version %q, want the mark's list's (10)", rv)
					}
					w.Header().Set("Content-Type", "application/json")
					for _, ev := range append(c.events, event("ADDED", last)) {
						_ = json.NewEncoder(w).Encode(ev)
					}
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				case r.URL.Path == "/api/v1/namespaces/lab/pods":
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: pods})
				case strings.HasSuffix(r.URL.Path, "/log"):
					w.Header().Set("Content-Type", "text/plain")
					fmt.Fprintf(w, "2026-07-05T10:00:02.000000000Z %s\n", strings.TrimSuffix(name, "/log"))
				case c.byName != nil && name == c.byName.Name:
					w.Header().Set("Content-Type", "application/json")
					_ = json.NewEncoder(w).Encode(c.byName)
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer srv.Close()
			d := standinDriver(t, srv.URL)
			ref := schema.PodRef{Selector: "app=backend"}
			mark, err := d.MarkPods(context.Background(), ref)
			if err != nil {
				t.Fatal(err)
			}
			defer mark.Since.Stop()
			ps := mark.Since.(*podsSince)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				ps.mu.Lock()
				seen, lost := ps.came[last.UID] != "", ps.lost
				ps.mu.Unlock()
				if seen || lost != "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the mark saw neither the watch's last pod nor its end in 10 s")
				}
			}
			pods = c.now
			var got []string
			from := schema.LogSince{Time: time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC), Pods: &mark}
			err = d.Logs(context.Background(), schema.Logs{PodRef: ref}, from, func(l schema.LogLine) { got = append(got, l.Text) })
			if !logsErrAsWanted(t, err, c.wantErr, got) {
				return
			}
			if lost := mark.Since.Lost(); (lost != "") != (c.events == nil) {
				t.Errorf("Lost() = %q, want lost %v", lost, c.events == nil)
			}
		})
	}
}
