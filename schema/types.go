package schema

import (
	"embed"
	"fmt"
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
		return fmt.Errorf("expected a duration such as \"500ms\" or \"5s\", got %q", string(b))
	}
	if v < 0 {
		return fmt.Errorf("expected a positive duration, got %q", string(b))
	}
	*d = Duration(v)
	return nil
}

// MarshalText prints the duration as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Object is a Kubernetes object as written in the scenario.
type Object = map[string]any

// Apply is the apply step.
type Apply struct {
	Objects   []Object `json:"objects,omitempty"`
	Files     []string `json:"files,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
}

// Delete is the delete step.
type Delete struct {
	Objects   []Object `json:"objects,omitempty"`
	Files     []string `json:"files,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Wait      *bool    `json:"wait,omitempty"`
}

// Scale is the scale step.
type Scale struct {
	Deployment string `json:"deployment"`
	Replicas   int    `json:"replicas"`
	Namespace  string `json:"namespace,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
}

// Restart is the restart step.
type Restart struct {
	Deployment string `json:"deployment"`
	Namespace  string `json:"namespace,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
}

// Kill is the kill step.
type Kill struct {
	Selector    string    `json:"selector,omitempty"`
	Pod         string    `json:"pod,omitempty"`
	Namespace   string    `json:"namespace,omitempty"`
	GracePeriod *Duration `json:"gracePeriod,omitempty"`
	Process     string    `json:"process,omitempty"`
	Signal      string    `json:"signal,omitempty"`
}

// Wait is the wait step.
type Wait struct {
	Rollout   string     `json:"rollout,omitempty"`
	Condition *Condition `json:"condition,omitempty"`
	Until     string     `json:"until,omitempty"`
	Interval  Duration   `json:"interval,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
}

// Condition is a status condition of an object.
type Condition struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Type       string `json:"type"`
	Status     string `json:"status,omitempty"`
}

// Get is the get step.
type Get struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Path       string `json:"path,omitempty"`
}

// Exec is the exec step.
type Exec struct {
	Argv      []string `json:"argv"`
	Pod       string   `json:"pod,omitempty"`
	Selector  string   `json:"selector,omitempty"`
	Container string   `json:"container,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Stdin     string   `json:"stdin,omitempty"`
	ExitCode  int      `json:"exitCode,omitempty"`
	Capture   string   `json:"capture,omitempty"`
}

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

// Load is the load step.
type Load struct {
	URL                   string            `json:"url"`
	From                  *PodRef           `json:"from,omitempty"`
	Connections           int               `json:"connections,omitempty"`
	QPS                   float64           `json:"qps,omitempty"`
	Requests              int               `json:"requests,omitempty"`
	Duration              Duration          `json:"duration,omitempty"`
	Keepalive             *bool             `json:"keepalive,omitempty"`
	Timeout               Duration          `json:"timeout,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	HTTP10                bool              `json:"http10,omitempty"`
	ResolveEachConnection *bool             `json:"resolveEachConnection,omitempty"`
}

// Snapshot is the snapshot step.
type Snapshot struct {
	Envoy      *PodRef `json:"envoy,omitempty"`
	Admin      string  `json:"admin,omitempty"`
	Prometheus string  `json:"prometheus,omitempty"`
	Backend    string  `json:"backend,omitempty"`
	Cluster    string  `json:"cluster,omitempty"`
	Hosts      bool    `json:"hosts,omitempty"`
	Histograms bool    `json:"histograms,omitempty"`
}

// Source is a stable description of where the snapshot reads from; snapshots with the same
// source form the pairs that a plain `delta` compares.
func (s Snapshot) Source() string {
	switch {
	case s.Envoy != nil:
		return "envoy " + s.Envoy.String() + " cluster " + s.Cluster
	case s.Admin != "":
		return "admin " + s.Admin + " cluster " + s.Cluster
	case s.Prometheus != "":
		return "prometheus " + s.Prometheus
	case s.Backend != "":
		return "backend " + s.Backend
	}
	return ""
}

// Config is the config step.
type Config struct {
	Envoy    *PodRef `json:"envoy,omitempty"`
	Admin    string  `json:"admin,omitempty"`
	Cluster  string  `json:"cluster,omitempty"`
	Listener string  `json:"listener,omitempty"`
	Route    string  `json:"route,omitempty"`
	Path     string  `json:"path,omitempty"`
}

// Logs is the logs step.
type Logs struct {
	PodRef
	Process string `json:"process,omitempty"`
	File    string `json:"file,omitempty"`
	Since   string `json:"since,omitempty"`
	Match   string `json:"match,omitempty"`
	Capture string `json:"capture,omitempty"`
}

// DNS is the dns step.
type DNS struct {
	Host      string     `json:"host"`
	Addresses []string   `json:"addresses"`
	Server    *HostsFile `json:"server,omitempty"`
}

// HostsFile is a CoreDNS hosts file written through a writer container.
type HostsFile struct {
	PodRef
	File string `json:"file,omitempty"`
}

// Process is the process step.
type Process struct {
	Argv  []string          `json:"argv"`
	Dir   string            `json:"dir,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Ready *Ready            `json:"ready,omitempty"`
}

// Ready is a readiness check.
type Ready struct {
	HTTP    string   `json:"http,omitempty"`
	TCP     string   `json:"tcp,omitempty"`
	Log     string   `json:"log,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
}

// Local is the local target's world.
type Local struct {
	Backends   map[string]Backend   `json:"backends,omitempty"`
	Blackholes map[string]Blackhole `json:"blackholes,omitempty"`
	DNS        *LocalDNS            `json:"dns,omitempty"`
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
