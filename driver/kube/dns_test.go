package kube

import (
	"strings"
	"testing"
)

func TestRewriteHosts(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		host    string
		addrs   []string
		want    string
		changed bool
	}{
		{
			name: "flip one host, the other's line untouched",
			in:   "10.0.0.1 gslb.lab.internal\n10.0.0.9   other.lab.internal   # keep  spacing\n",
			host: "gslb.lab.internal", addrs: []string{"10.0.0.2"},
			want:    "10.0.0.2 gslb.lab.internal\n10.0.0.9   other.lab.internal   # keep  spacing\n",
			changed: true,
		},
		{
			name: "host in the middle keeps its place",
			in:   "# lab hosts\n1.1.1.1 a\n2.2.2.2 b\n3.3.3.3 c\n",
			host: "b", addrs: []string{"9.9.9.9", "8.8.8.8"},
			want:    "# lab hosts\n1.1.1.1 a\n9.9.9.9 b\n8.8.8.8 b\n3.3.3.3 c\n",
			changed: true,
		},
		{
			name: "several lines of the host collapse into the new ones",
			in:   "1.1.1.1 a\n2.2.2.2 b\n3.3.3.3 a\n",
			host: "a", addrs: []string{"4.4.4.4"},
			want:    "4.4.4.4 a\n2.2.2.2 b\n",
			changed: true,
		},
		{
			name: "absent host is appended",
			in:   "1.1.1.1 a\n",
			host: "b", addrs: []string{"2.2.2.2"},
			want:    "1.1.1.1 a\n2.2.2.2 b\n",
			changed: true,
		},
		{
			name: "missing final newline is added before appending, not elsewhere",
			in:   "1.1.1.1 a",
			host: "b", addrs: []string{"2.2.2.2"},
			want:    "1.1.1.1 a\n2.2.2.2 b\n",
			changed: true,
		},
		{
			name: "empty file",
			in:   "",
			host: "a", addrs: []string{"1.1.1.1"},
			want:    "1.1.1.1 a\n",
			changed: true,
		},
		{
			name: "no addresses removes the host",
			in:   "1.1.1.1 a\n2.2.2.2 b\n",
			host: "a", addrs: nil,
			want:    "2.2.2.2 b\n",
			changed: true,
		},
		{
			name: "shared line keeps the other names",
			in:   "1.1.1.1 a b # both\n",
			host: "a", addrs: []string{"3.3.3.3"},
			want:    "3.3.3.3 a\n1.1.1.1 b # both\n",
			changed: true,
		},
		{
			name: "match is case-insensitive and ignores a trailing dot; prefixes do not match",
			in:   "1.1.1.1 GSLB.lab.\n5.5.5.5 gslb.lab.internal\n6.6.6.6 xgslb.lab\n",
			host: "gslb.lab", addrs: []string{"2.2.2.2"},
			want:    "2.2.2.2 gslb.lab\n5.5.5.5 gslb.lab.internal\n6.6.6.6 xgslb.lab\n",
			changed: true,
		},
		{
			name: "comments naming the host are not its lines",
			in:   "# 1.1.1.1 a\n1.1.1.1 a\n",
			host: "a", addrs: []string{"1.1.1.1"},
			want:    "# 1.1.1.1 a\n1.1.1.1 a\n",
			changed: false,
		},
		{
			name: "CRLF lines of other hosts stay byte for byte",
			in:   "1.1.1.1 a\r\n2.2.2.2 b\r\n",
			host: "a", addrs: []string{"3.3.3.3"},
			want:    "3.3.3.3 a\n2.2.2.2 b\r\n",
			changed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := rewriteHosts([]byte(tt.in), tt.host, tt.addrs)
			if string(got) != tt.want || changed != tt.changed {
				t.Errorf("rewriteHosts(%q, %q, %v) =\n%q, %v\nwant\n%q, %v", tt.in, tt.host, tt.addrs, got, changed, tt.want, tt.changed)
			}
		})
	}
}

// Every line that does not name the host survives byte for byte, whatever the file holds.
func TestRewriteHostsKeepsOtherLines(t *testing.T) {
	in := "# header\n\n10.1.1.1\tone.lab two.lab\n  10.2.2.2 three.lab  \nnot even a hosts line\n10.3.3.3 target.lab\n"
	got, _ := rewriteHosts([]byte(in), "target.lab", []string{"10.9.9.9", "fd00::1"})
	for _, line := range strings.SplitAfter(in, "\n") {
		if line == "" || strings.Contains(line, "target.lab") {
			continue
		}
		if !strings.Contains(string(got), line) {
			t.Errorf("line %q lost in\n%s", line, got)
		}
	}
	if !strings.Contains(string(got), "10.9.9.9 target.lab\nfd00::1 target.lab\n") {
		t.Errorf("new records missing:\n%s", got)
	}
	if strings.Contains(string(got), "10.3.3.3") {
		t.Errorf("old record kept:\n%s", got)
	}
}

func TestCheckHostName(t *testing.T) {
	for _, h := range []string{"", "a b", "a\nb", "a#b"} {
		if checkHostName(h) == nil {
			t.Errorf("checkHostName(%q) = nil, want an error", h)
		}
	}
	if err := checkHostName("gslb.lab.internal"); err != nil {
		t.Error(err)
	}
}
