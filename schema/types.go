package schema

import (
	"embed"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Files holds the CUE schema, embedded so that labrun validates scenarios with the schema it
// was built with, wherever the scenario lives.
//
//go:embed *.cue
var Files embed.FS

// ImportPath is the CUE import path of this package.
const ImportPath = "labrun.dev/schema"

// Module is the CUE module that holds ImportPath.
const Module = "labrun.dev@v0"

// Duration is a time.Duration written in CUE as a Go duration string ("200ms", "5s").
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		if durationShape.Match(b) {
			return fmt.Errorf("expected a duration of at most %s, got %q", time.Duration(math.MaxInt64), string(b))
		}
		return fmt.Errorf("expected a duration such as \"500ms\" or \"5s\", got %q", string(b))
	}
	if v < 0 {
		return fmt.Errorf("expected a positive duration, got %q", string(b))
	}
	*d = Duration(v)
	return nil
}

// durationShape is the schema's #Duration pattern.
var durationShape = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// MarshalText prints the duration as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Object is a Kubernetes object as written in the scenario.
type Object = map[string]any

// PodRef names a pod and a container.
type PodRef struct {
	Pod       string `json:"pod,omitempty"`
	Selector  string `json:"selector,omitempty"`
	Container string `json:"container,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// String prints the reference as kubectl users read it.
func (p PodRef) String() string {
	var b strings.Builder
	if p.Namespace != "" {
		b.WriteString(p.Namespace + "/")
	}
	if p.Pod != "" {
		b.WriteString(p.Pod)
	} else {
		b.WriteString("{" + p.Selector + "}")
	}
	if p.Container != "" {
		b.WriteString(":" + p.Container)
	}
	return b.String()
}

// Local is the local target's world.
type Local struct {
	Backends   map[string]Backend   `json:"backends,omitempty"`
	Blackholes map[string]Blackhole `json:"blackholes,omitempty"`
	DNS        *LocalDNS            `json:"dns,omitempty"`
}

// DefaultMaxDelay caps a backend's ?delay= when it sets no maxDelay: fortio's own cap.
const DefaultMaxDelay = 1500 * time.Millisecond

// DelayChoice is one entry of a backend's ?delay=: a delay and the percentage of requests
// that get it.
type DelayChoice struct {
	Delay   time.Duration
	Percent float64
}

// ParseDelay reads a backend's ?delay=: a duration ("200ms", every request), or a
// distribution of durations and percentages ("10ms:20,1s:0.5": 20 % wait 10ms, 0.5 % 1s, the
// rest none).
func ParseDelay(s string) ([]DelayChoice, error) {
	bad := fmt.Errorf("bad delay %q: want a duration such as 200ms, or 10ms:20,1s:0.5", s)
	if !strings.Contains(s, ":") {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, bad
		}
		return []DelayChoice{{d, 100}}, nil
	}
	var out []DelayChoice
	total := 0.0
	for entry := range strings.SplitSeq(s, ",") {
		ds, ps, ok := strings.Cut(entry, ":")
		d, err := time.ParseDuration(ds)
		p, perr := strconv.ParseFloat(strings.TrimSuffix(ps, "%"), 64)
		if !ok || err != nil || d < 0 || perr != nil || p < 0 {
			return nil, bad
		}
		total += p
		out = append(out, DelayChoice{d, p})
	}
	if total > 100.0001 {
		return nil, fmt.Errorf("bad delay %q: percentages add up to more than 100", s)
	}
	return out, nil
}

// Backend is a local echo server.
type Backend struct {
	Address  string   `json:"address,omitempty"`
	MaxDelay Duration `json:"maxDelay,omitempty"`
}

// Blackhole is a local endpoint that never accepts.
type Blackhole struct {
	Address string `json:"address,omitempty"`
}

// LocalDNS is the local lab DNS zone.
type LocalDNS struct {
	Zone    string              `json:"zone"`
	TTL     *int                `json:"ttl,omitempty"`
	Records map[string][]string `json:"records,omitempty"`
	Address string              `json:"address,omitempty"`
}

// Bool returns *b, or def when b is nil.
func Bool(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
