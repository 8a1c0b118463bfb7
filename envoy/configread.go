package envoy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"labrun.dev/labrun/schema"
)

// ConfigFromDumps is the value a config step of req selected from the config dumps it read
// (its artifacts, in the order read), read again as the drivers read it: a resource's own
// dumps (config_dump-<resource>.json, the kube target's ?resource= queries) first, then the
// whole dump (config_dump.json); the names of a kind from the whole dump; the whole dump when
// the step names no resource. It is how a record's value is held to the artifacts it was
// parsed from (interp.ArtifactContradictions). req is the step's parameters, resolved.
func ConfigFromDumps(req schema.Config, dumps []schema.Artifact) (any, error) {
	last := func(name string) []byte {
		for i := len(dumps) - 1; i >= 0; i-- {
			if dumps[i].Name == name {
				return dumps[i].Data
			}
		}
		return nil
	}
	if req.Names != "" {
		data := last("config_dump.json")
		if data == nil {
			return nil, errors.New("no config_dump.json")
		}
		names, err := DumpNames(data, req.Names)
		if err != nil {
			return nil, err
		}
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		return list, nil
	}
	var name string
	var pick, whole func([]byte, string) (map[string]any, error)
	switch {
	case req.Cluster != "":
		name, pick, whole = req.Cluster, DumpCluster, DumpCluster
	case req.Listener != "":
		name, pick, whole = req.Listener, DumpListener, DumpListener
	case req.Route != "":
		name, pick, whole = req.Route, DumpRoute, DumpRoute
	case req.Endpoints != "":
		name, pick, whole = req.Endpoints, DumpEndpoints, DumpClusterEndpoints
	}
	var resource any
	if pick == nil {
		data := last("config_dump.json")
		if data == nil {
			return nil, errors.New("no config_dump.json")
		}
		if err := json.Unmarshal(data, &resource); err != nil {
			return nil, fmt.Errorf("config_dump is not JSON: %w", err)
		}
	} else {
		for _, d := range dumps {
			var m map[string]any
			var err error
			switch {
			case strings.HasPrefix(d.Name, "config_dump-") && strings.HasSuffix(d.Name, ".json"):
				m, err = pick(d.Data, name)
			case d.Name == "config_dump.json":
				m, err = whole(d.Data, name)
			default:
				continue
			}
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", d.Name, err)
			}
			resource = m
			break
		}
		if resource == nil {
			return nil, fmt.Errorf("no dump holds %s", name)
		}
	}
	value, _, err := ReadConfig(resource, req.ResourceKind(), req.Path, req.Durations == schema.DurationsSeconds)
	return value, err
}
