package main

import "testing"

// TestCommittedShapesAreCurrent fails when ../groups.json.gz or ../groups_gen.go differ from
// what this generator writes from the k8s.io/api in go.mod.
func TestCommittedShapesAreCurrent(t *testing.T) {
	data, src, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := upToDate("..", data, src); err != nil {
		t.Fatal(err)
	}
}
