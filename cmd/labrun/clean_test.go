package main

import (
	"os"
	"os/exec"
	"testing"

	"labrun.dev/labrun/driver/kube"
)

// A run is alive only while its pid runs on this host with the start time it recorded; a
// pid that ended, or was recycled (another start time), is a dead run; another host's run is
// neither.
func TestOwnerState(t *testing.T) {
	host, _ := os.Hostname()
	self := os.Getpid()
	start, ok := procStart(self)
	if !ok {
		t.Fatal("procStart of this process failed")
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		l    kube.Leftover
		want runState
	}{
		{"this process", kube.Leftover{Host: host, PID: self, PIDStart: start}, runAlive},
		{"start unknown", kube.Leftover{Host: host, PID: self}, runAlive},
		{"recycled pid", kube.Leftover{Host: host, PID: self, PIDStart: start + 1}, runDead},
		{"ended", kube.Leftover{Host: host, PID: ended.Process.Pid, PIDStart: 1}, runDead},
		{"other host", kube.Leftover{Host: host + "-elsewhere", PID: self, PIDStart: start}, runOtherHost},
		{"no owner", kube.Leftover{}, runDead},
	} {
		if got := ownerState(tc.l); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGroupRuns(t *testing.T) {
	host, _ := os.Hostname()
	items := []kube.Leftover{
		{RunID: "b", Scenario: "s", Host: host, PID: os.Getpid()},
		{RunID: "a", Scenario: "s"},
		{RunID: "b", Scenario: "s", Host: host, PID: os.Getpid()},
	}
	runs := groupRuns(items)
	if len(runs) != 2 || runs[0].id != "a" || runs[1].id != "b" || len(runs[1].items) != 2 {
		t.Fatalf("groups: %+v", runs)
	}
	if runs[0].state != runDead || runs[1].state != runAlive {
		t.Errorf("states: %v %v", runs[0].state, runs[1].state)
	}
}
