package main

import "testing"

// TestCommittedDescriptorsAreCurrent fails when envoy.binpb or version_gen.go differ from what
// this generator writes from the go-control-plane version in go.mod.
func TestCommittedDescriptorsAreCurrent(t *testing.T) {
	set, version, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := upToDate("..", set, version); err != nil {
		t.Fatal(err)
	}
}
