package sandbox

import "testing"

// TestFreePorts: the ports are distinct, bindable and below the kernel's ephemeral range, where
// outgoing connections (which could take a released port before a component binds it) never are.
func TestFreePorts(t *testing.T) {
	ports, err := freePorts(12)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 12 {
		t.Fatalf("got %d ports, want 12", len(ports))
	}
	eph := ephemeralStart()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Errorf("port %d chosen twice", p)
		}
		seen[p] = true
		if eph-1-10000 >= 1000 && (p < 10000 || p >= eph) {
			t.Errorf("port %d is not in [10000, %d)", p, eph)
		}
	}
}
