package schema

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"labrun.dev/labrun/internal/kubeshape"
)

// Events is the events step: a namespace's Kubernetes events, filtered.
type Events struct {
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Type      string `json:"type,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Event is one event as an events step records it (and expressions read it: ev[0].reason).
type Event struct {
	Type    string  `json:"type"`
	Reason  string  `json:"reason"`
	Object  string  `json:"object"`
	Message string  `json:"message"`
	Count   float64 `json:"count"`
	// Last is when it was last seen (RFC 3339), as the API server says.
	Last string `json:"last"`
}

var eventsKind = Kind{
	Usage: "record a namespace's Kubernetes events, by object and reason (e.g. in catch)",
	New:   func() Params { return new(Events) },
}

// EventReasons are the reasons the kubelet and Kubernetes' controllers write most often: a
// literal a letter or two off one of them (BackOf) is most likely a misspelling, which no
// event has.
var EventReasons = []string{
	"BackOff", "Completed", "Created", "DeadlineExceeded", "Evicted", "ExceededGracePeriod",
	"Failed", "FailedAttachVolume", "FailedCreate", "FailedCreatePodSandBox", "FailedDelete",
	"FailedGetResourceMetric", "FailedKillPod", "FailedMount", "FailedPostStartHook",
	"FailedPreStopHook", "FailedScheduling", "FailedSync", "Killing", "NetworkNotReady",
	"NodeNotReady", "NodeReady", "OOMKilling", "Preempted", "Preempting", "ProbeWarning",
	"Pulled", "Pulling", "Rebooted", "RegisteredNode", "SandboxChanged", "SawCompletedJob",
	"ScalingReplicaSet", "Scheduled", "Started", "SuccessfulCreate", "SuccessfulDelete",
	"SuccessfulRescale", "Unhealthy",
}

// eventsResult is what expressions read by an events step's name: the events, oldest first.
var eventsResult = ListOf(StructOf(nil,
	F("type", &Type{Kind: TString, Enum: []string{"Normal", "Warning"}, Doc: "Normal or Warning", Go: StringType.Go}, "Normal or Warning"),
	F("reason", &Type{Kind: TString, Known: EventReasons, Go: StringType.Go}, "why, in a word (BackOff, Scheduled, FailedMount, …)"),
	F("object", StrForm("e.g. \"Deployment/backend\"", FormKindName), "the object it is about: Kind/name"),
	F("message", StringType, "what happened"),
	F("count", NumberType, "how many times it happened"),
	F("last", StringType, "when it last happened (RFC 3339)"),
))

// Result: the events.
func (p *Events) Result(c ResultContext) *Type { return eventsResult }

// Check: the reason is a pattern; a name needs the kind it names.
func (p *Events) Check(c Checker) {
	if p.Reason != "" {
		checkRE(c, "reason", p.Reason)
	}
	if p.Name != "" && p.Kind == "" {
		c.Errorf("name", "name picks the events of one object: give its kind too, e.g. kind: \"Pod\"")
	}
	// The filter compares kind as the API server writes it (type's enum is the schema's):
	// another spelling keeps
	// no event, and "no BackOff event for pod web" (len(ev) == 0) would hold whatever happened.
	if p.Kind != "" && !c.Templated("kind") {
		if _, kind := kubeshape.Builtin("", p.Kind); kind != "" && kind != p.Kind {
			c.Errorf("kind", "events name their object's kind as the API server writes it, %q: kind %q keeps no event (len(…) == 0 would hold whatever happened); write kind: %q", kind, p.Kind, kind)
		}
	}
}

// Plan: one API call.
func (p *Events) Plan() Plan { return Plan{} }

// Needs the Kubernetes API.
func (p *Events) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates nothing.
func (p *Events) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the filter.
func (p *Events) Summary() string {
	var parts []string
	if p.Kind != "" {
		parts = append(parts, strings.TrimSpace(p.Kind+" "+p.Name))
	}
	if p.Reason != "" {
		parts = append(parts, "reason "+p.Reason)
	}
	if p.Type != "" {
		parts = append(parts, p.Type)
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ", ")
}

// Run lists the namespace's events and records those the filter keeps, oldest first, with a
// table of them as the step's artifact events.txt.
func (p *Events) Run(ctx context.Context, rt Runtime) error {
	ns := rt.Namespace(p.Namespace)
	v, err := rt.Target().Cluster.Get(ctx, Get{Kind: "Event", APIVersion: "v1", Namespace: ns})
	if err != nil {
		return err
	}
	var reason *regexp.Regexp
	if p.Reason != "" {
		if reason, err = regexp.Compile(p.Reason); err != nil {
			return fmt.Errorf("reason: %w", err) // Check refuses it before the run
		}
	}
	items, _ := v.([]any)
	var out []Event
	for _, it := range items {
		m, _ := it.(map[string]any)
		inv, _ := m["involvedObject"].(map[string]any)
		e := Event{
			Type: str(m["type"]), Reason: str(m["reason"]), Message: str(m["message"]),
			Object: str(inv["kind"]) + "/" + str(inv["name"]),
			Last:   firstOf(str(m["lastTimestamp"]), str(m["eventTime"]), str(m["firstTimestamp"])),
		}
		if c, ok := m["count"].(float64); ok {
			e.Count = c
		}
		switch {
		case p.Kind != "" && str(inv["kind"]) != p.Kind,
			p.Name != "" && str(inv["name"]) != p.Name,
			p.Type != "" && e.Type != p.Type,
			reason != nil && !reason.MatchString(e.Reason):
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last < out[j].Last })
	var b strings.Builder
	fmt.Fprintf(&b, "# events in %s (%s): %d\n", ns, p.Summary(), len(out))
	for _, e := range out {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\tx%g\t%s\n", e.Last, e.Type, e.Reason, e.Object, e.Count, e.Message)
	}
	rt.Artifact("events.txt", []byte(b.String()))
	list := make([]any, len(out))
	for i, e := range out {
		list[i] = map[string]any{"type": e.Type, "reason": e.Reason, "object": e.Object, "message": e.Message, "count": e.Count, "last": e.Last}
	}
	rt.Record(list)
	return nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
