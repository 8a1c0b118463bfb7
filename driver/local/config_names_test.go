package local

import (
	"slices"
	"testing"

	"labrun.dev/labrun/schema"
)

// The local target answers a names query and durations as seconds from the admin's dump.
func TestConfigNamesAndSeconds(t *testing.T) {
	admin, _ := fakeAdmin(t)
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()
	res, err := tg.Stats.Config(ctx, schema.Config{Admin: admin.URL, Names: "clusters"})
	if err != nil {
		t.Fatal(err)
	}
	names, ok := res.Value.([]any)
	if !ok || !slices.Contains(names, any(adminCluster)) {
		t.Errorf("names %#v, want a list holding %q", res.Value, adminCluster)
	}
	res, err = tg.Stats.Config(ctx, schema.Config{Admin: admin.URL, Cluster: adminCluster, Path: "connect_timeout", Durations: schema.DurationsSeconds})
	if err != nil || res.Value != 10.0 {
		t.Errorf("connect_timeout in seconds: %#v, %v", res.Value, err)
	}
}
