package suite

import (
	"slices"
	"testing"
)

// TestLocalChange: a command on this machine is taken for one that changes nothing only
// when it is known to read; any other may change the cluster (probe p30 #3).
func TestLocalChange(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		stdin   string
		changes bool
	}{
		{[]string{"kubectl", "get", "pods", "-A"}, "", false},
		{[]string{"kubectl", "--context", "kind-east", "-n", "x", "get", "pods"}, "", false},
		{[]string{"kubectl", "-n", "istio-system", "rollout", "restart", "deployment/istiod"}, "", true},
		{[]string{"kubectl", "rollout", "status", "deployment/web"}, "", false},
		{[]string{"kubectl", "run", "tmp", "--image=busybox"}, "", true},
		{[]string{"kubectl", "expose", "deployment", "web", "--port=80"}, "", true},
		{[]string{"kubectl", "exec", "deploy/web", "--", "kill", "1"}, "", true},
		{[]string{"kubectl", "apply", "--dry-run=server", "-f", "x.yaml"}, "", false},
		{[]string{"kubectl", "config", "use-context", "kind-west"}, "", true},
		{[]string{"kubectl", "config", "current-context"}, "", false},
		{[]string{"kubectl", "wait", "--for=condition=Ready", "pod", "-l", "app=x"}, "", false},
		{[]string{"istioctl", "proxy-config", "cluster", "deploy/curl"}, "", false},
		{[]string{"istioctl", "pc", "log", "deploy/curl", "--level", "debug"}, "", true},
		{[]string{"istioctl", "install", "-y"}, "", true},
		{[]string{"istioctl", "x", "precheck"}, "", false},
		{[]string{"istioctl", "analyze", "-n", "lab"}, "", false},
		{[]string{"helm", "list", "-A"}, "", false},
		{[]string{"helm", "-n", "x", "upgrade", "--install", "r", "chart"}, "", true},
		{[]string{"curl", "-s", "http://x/"}, "", false},
		{[]string{"python3", "patch.py"}, "", true},
		{[]string{"./setup.sh"}, "", true},
		{[]string{"sh", "-c", "curl -s http://x/ | jq -r .a; echo done"}, "", false},
		{[]string{"sh", "-c", "for i in 1 2 3; do curl -s http://x/$i; sleep 1; done"}, "", false},
		{[]string{"sh", "-c", "kubectl get pods && kubectl delete pod web-0"}, "", true},
		{[]string{"bash", "-ec", "X=1 timeout 5s kubectl get ns $(kubectl create ns y)"}, "", true},
		{[]string{"sh", "-c", "$CMD apply"}, "", true},
		{[]string{"bash", "setup.sh"}, "", true},
		{[]string{"sh"}, "kubectl delete ns lab\n", true},
		{[]string{"sh"}, "echo hi\n", false},
		{[]string{"sh", "-c", "echo 'a; kubectl get x'"}, "", false},
		{[]string{"env", "A=b", "kubectl", "scale", "deploy/x", "--replicas=0"}, "", true},
		{[]string{"sh", "-c", "ls | xargs -n1 kubectl delete -f"}, "", true},
		{[]string{"sh", "-c", "# probe\ncurl -s -w '%{http_code}' http://x/ # then (kubectl delete)\n"}, "", false},
		{[]string{"sh", "-c", "echo \"$(kubectl delete ns x)\""}, "", true},
		{nil, "", false},
	} {
		what, got := localChange(c.argv, c.stdin, func([]string) (string, bool) { return "", false })
		if got != c.changes {
			t.Errorf("localChange(%q, %q) = %q, %v; want %v", c.argv, c.stdin, what, got, c.changes)
		}
	}
}

// TestFetchedURLs: curl and wget read an operand with no scheme as http:// (probe p30).
func TestFetchedURLs(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want []string
	}{
		{[]string{"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "httpbin.org/headers"}, []string{"http://httpbin.org/headers"}},
		{[]string{"curl", "-sSo", "/dev/null", "127.0.0.2:8080/echo"}, []string{"http://127.0.0.2:8080/echo"}},
		{[]string{"curl", "-s", "http://httpbin.org/"}, nil},
		{[]string{"sh", "-c", "wget -qO- httpbin.org/get | head -1"}, []string{"http://httpbin.org/get"}},
		{[]string{"sh", "-c", "X=1 timeout 5 curl -H 'Host: a.example.com' api.example.com:8080/x"}, []string{"http://api.example.com:8080/x"}},
		{[]string{"echo", "httpbin.org"}, nil},
	} {
		if got := fetchedURLs(c.argv); !slices.Equal(got, c.want) {
			t.Errorf("fetchedURLs(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
}

// TestLocalFiles: the files a command on this machine writes and reads, as its words say; a
// path known only when it runs, and the devices, are left out (probe p42).
func TestLocalFiles(t *testing.T) {
	none := func([]string) (string, bool) { return "", false }
	for _, c := range []struct {
		argv          []string
		stdin         string
		writes, reads []string
	}{
		{[]string{"sh", "-c", "echo A > state.txt"}, "", []string{"state.txt"}, nil},
		{[]string{"sh", "-c", "echo A >>log; cat state.txt | tee -a out.txt 2>err.log"}, "", []string{"log", "err.log", "out.txt"}, []string{"state.txt"}},
		{[]string{"bash", "-ec", "X=1 wc -l < in.txt 2>/dev/null >&2"}, "", nil, []string{"in.txt"}},
		{[]string{"sh"}, "touch /tmp/mark && rm -f $f *.tmp", []string{"/tmp/mark"}, nil},
		{[]string{"cp", "-r", "a", "b", "dest/"}, "", []string{"dest/"}, nil},
		{[]string{"mv", "a", "b"}, "", []string{"a", "b"}, nil},
		{[]string{"cat", "x.json"}, "", nil, []string{"x.json"}},
		{[]string{"sh", "-c", "cat <<EOF\nhi\nEOF"}, "", nil, nil},
		{[]string{"curl", "-s", "http://x/"}, "", nil, nil},
		{[]string{"sh", "run.sh"}, "", nil, nil}, // a script not known before the run
		// Writes that two runs of a --parallel suite missed, each then judged on what the other
		// wrote: >| (noclobber's override, split at its | as a pipe), sort -o, dd of=, sed -i.
		{[]string{"sh", "-c", "echo B >|state.txt"}, "", []string{"state.txt"}, nil},
		{[]string{"sh", "-c", "echo B >| state.txt"}, "", []string{"state.txt"}, nil},
		{[]string{"sh", "-c", "sort -u -o out.txt in.txt"}, "", []string{"out.txt"}, []string{"in.txt"}},
		{[]string{"sort", "--output=out.txt", "in.txt"}, "", []string{"out.txt"}, []string{"in.txt"}},
		{[]string{"sh", "-c", "sort -oout.txt in.txt"}, "", []string{"out.txt"}, []string{"in.txt"}},
		{[]string{"dd", "if=in.bin", "of=out.bin", "bs=1"}, "", []string{"out.bin"}, []string{"in.bin"}},
		{[]string{"sh", "-c", "sed -i s/A/B/ state.txt"}, "", []string{"state.txt"}, nil},
		{[]string{"sed", "-i.bak", "-e", "s/A/B/", "a.txt", "b.txt"}, "", []string{"a.txt", "b.txt"}, nil},
		{[]string{"sed", "s/A/B/", "a.txt"}, "", nil, nil},
		{[]string{"sed", "-ni.orig", "p", "a.txt"}, "", []string{"a.txt"}, nil},
		{[]string{"sed", "-Ei", "s/A/B/", "a.txt"}, "", []string{"a.txt"}, nil},
		{[]string{"sed", "-n", "-e", "p", "a.txt"}, "", nil, nil},
	} {
		w, r, _ := localFiles(c.argv, c.stdin, nil, none)
		if !slices.Equal(w, c.writes) || !slices.Equal(r, c.reads) {
			t.Errorf("%q (stdin %q): writes %q, reads %q; want %q, %q", c.argv, c.stdin, w, r, c.writes, c.reads)
		}
	}
}

// A path a shell's script names through its env: or an assignment is the file it writes;
// one known only when it runs, and a program whose files labrun does not know, are said as
// not seen (probe p109: the schedule ran two runs writing $OUT=state.txt at once).
func TestLocalFilesThroughEnvAndNotSeen(t *testing.T) {
	none := func([]string) (string, bool) { return "", false }
	env := map[string]string{"OUT": "state.txt", "DIR": "/tmp/x", "LATER": "$HOME/f"}
	for _, c := range []struct {
		argv                  []string
		writes, reads, unseen []string
	}{
		{[]string{"sh", "-c", `echo 1 > "$OUT"; cat ${OUT}`}, []string{"state.txt"}, []string{"state.txt"}, nil},
		{[]string{"sh", "-c", "touch $DIR/a.txt"}, []string{"/tmp/x/a.txt"}, nil, nil},
		{[]string{"sh", "-c", "f=out.txt; echo > $f; export g=$f.bak; cp $f $g"}, []string{"out.txt", "out.txt.bak"}, nil, nil},
		{[]string{"sh", "-c", "echo > $LATER"}, nil, nil, []string{"writes $LATER, a path known only when it runs"}},
		{[]string{"sh", "-c", "echo > $NOPE; rm -f *.tmp"}, nil, nil, []string{"writes $NOPE, a path known only when it runs", "writes *.tmp, a path known only when it runs"}},
		{[]string{"sh", "-c", "python3 gen.py && echo ok"}, nil, nil, []string{"runs python3, a program whose files labrun does not know"}},
		{[]string{"curl", "-s", "http://x/"}, nil, nil, nil},
		{[]string{"curl", "-so", "out", "http://x/"}, nil, nil, []string{"runs curl, a program whose files labrun does not know"}},
		{[]string{"sh", "run.sh"}, nil, nil, []string{`runs "sh run.sh", a script not known before the run`}},
		// A shell in the script: its own script read the same way.
		{[]string{"sh", "-c", "bash -c 'python3 gen.py > $OUT'"}, []string{"state.txt"}, nil, []string{"runs python3, a program whose files labrun does not know"}},
		{[]string{"sh", "-c", "f=out.txt; sh -c \"touch $f\""}, []string{"out.txt"}, nil, nil},
		// Not in a shell: no one expands $OUT, it is a file of that name.
		{[]string{"touch", "$OUT"}, nil, nil, []string{"writes $OUT, a path known only when it runs"}},
	} {
		w, r, u := localFiles(c.argv, "", env, none)
		if !slices.Equal(w, c.writes) || !slices.Equal(r, c.reads) || !slices.Equal(u, c.unseen) {
			t.Errorf("%q: writes %q, reads %q, not seen %q; want %q, %q, %q", c.argv, w, r, u, c.writes, c.reads, c.unseen)
		}
	}
}
