package interp_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLogsRecordPods: a logs step by selector records the pods it read (a kube read by
// selector reads every pod the selector matches) and each line's pod, which expressions read:
// the 503 of "no replica logged a 503" is found whichever replica logged it.
func TestLogsRecordPods(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "lg", logs: {selector: "app=backend", match: " 503 "}}]
	expect: [
		"lg.pods == ['backend-a', 'backend-b', 'backend-c']",
		"lg.count == 1 && lg.entries[0].pod == 'backend-c'",
	]
}
`)
	at := time.Now().Add(time.Hour)
	w := &fakes.World{Lines: []schema.LogLine{
		{Time: at, Text: "GET / 200 -", Pod: "backend-a"},
		{Time: at.Add(time.Millisecond), Text: "GET / 200 -", Pod: "backend-b"},
		{Time: at.Add(2 * time.Millisecond), Text: "GET / 503 UO", Pod: "backend-c"},
	}}
	rec := interp.New(w.Target(), interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
		Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s %+v", rec.Outcome, rec.Error, rec.Expectations)
	}
	if got := rec.Logs()["lg"].Pods; !reflect.DeepEqual(got, []string{"backend-a", "backend-b", "backend-c"}) {
		t.Errorf("pods %q", got)
	}
}
