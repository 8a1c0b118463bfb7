package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The labels and annotations that mark what a run of labrun created on a cluster, so that
// what a dead run left behind can be found (`labrun clean`) and told from what a live run
// still uses.
const (
	// LabelRun is the run's id (the one in its report's file names).
	LabelRun = "labrun.dev/run"
	// LabelScenario is the scenario's name, made a valid label value (see ScenarioLabel).
	LabelScenario = "labrun.dev/scenario"
	// AnnotationScenario is the scenario's name as written.
	AnnotationScenario = "labrun.dev/scenario"
	// AnnotationOwner names the labrun process that created the object:
	// "host=<hostname> pid=<pid> start=<process start, clock ticks since boot>".
	AnnotationOwner = "labrun.dev/owner"
)

// Run identifies the run whose objects the driver creates.
type Run struct {
	ID       string
	Scenario string
	Host     string
	PID      int
	// PIDStart is the owner's start time (Linux: clock ticks since boot, from /proc); with the
	// pid, it names one process for good. 0 when unknown.
	PIDStart uint64
}

// Owner is the owner annotation's value.
func (r Run) Owner() string {
	return fmt.Sprintf("host=%s pid=%d start=%d", r.Host, r.PID, r.PIDStart)
}

// ParseOwner reads an owner annotation; ok is false when it is not one.
func ParseOwner(s string) (host string, pid int, start uint64, ok bool) {
	var gotHost, gotPID bool
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "host":
			host, gotHost = v, true
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", 0, 0, false
			}
			pid, gotPID = n, true
		case "start":
			start, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return host, pid, start, gotHost && gotPID && pid > 0
}

// ScenarioLabel makes a scenario's name a label value: at most 63 characters of
// [A-Za-z0-9_.-], starting and ending with a letter or digit. A name that had to be cut keeps
// a hash of the whole, so that two long names stay apart.
func ScenarioLabel(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	s := string(b)
	if len(s) > 63 || s != name {
		sum := sha256.Sum256([]byte(name))
		if len(s) > 54 {
			s = s[:54]
		}
		s = s + "-" + hex.EncodeToString(sum[:4])
	}
	s = strings.Trim(s, "-_.")
	if s == "" {
		s = "unnamed"
	}
	return s
}

// stamp marks an object this run creates with the run's labels and owner annotation.
func (r Run) stamp(u *unstructured.Unstructured) {
	if r.ID == "" {
		return
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelRun] = r.ID
	labels[LabelScenario] = ScenarioLabel(r.Scenario)
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationScenario] = r.Scenario
	ann[AnnotationOwner] = r.Owner()
	u.SetAnnotations(ann)
}

// keepMarks copies the run marks of an object that exists already (made by an earlier run)
// into what is applied again: server-side apply would otherwise remove the labels that its
// field manager, labrun, set before and no longer sends, and the object would be lost to
// `labrun clean`.
func keepMarks(cur, u *unstructured.Unstructured) {
	cl := cur.GetLabels()
	if _, ok := cl[LabelRun]; !ok {
		return
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for _, k := range []string{LabelRun, LabelScenario} {
		if v, ok := cl[k]; ok {
			labels[k] = v
		}
	}
	u.SetLabels(labels)
	ca := cur.GetAnnotations()
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for _, k := range []string{AnnotationScenario, AnnotationOwner} {
		if v, ok := ca[k]; ok {
			ann[k] = v
		}
	}
	u.SetAnnotations(ann)
}
