package dsl

import "testing"

func TestSig4(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0"}, {12345, "12350"}, {1.23456, "1.235"}, {0.00123456, "0.001235"}, {-2.5, "-2.5"}, {100, "100"}, {0.1 + 0.2, "0.3"}, {3e20, "3e+20"}} {
		if got := Sig4(c.x); got != c.want {
			t.Errorf("Sig4(%v) = %s, want %s", c.x, got, c.want)
		}
	}
}

func TestUnitOf(t *testing.T) {
	roots := map[string]string{"fortio": "load", "after": "snapshot", "g": "series", "access": "logs"}
	for v, want := range map[string]string{
		"fortio.p50": "ms", "fortio.qps": "1/s", "fortio.code503": "count", `fortio.codes["503"]`: "count", "fortio.duration": "s",
		"fortio.ips[backends.a.address]": "count", `fortio.ips["10.0.0.1:80"]`: "count",
		"delta.upstream_rq_pending_overflow": "count", "after.upstream_cx_rx_bytes_total": "bytes", "delta.upstream_cx_length_ms": "ms",
		`delta("a", "b").rq_total`: "count", "after[vars.stat]": "",
		"g.max.rq_active": "count", "access.count": "count", `access.codes["503"]`: "count", "vars.requests": "", "started.flip": "s",
		"fortio.code503 / fortio.requests": "", "ip.stdout": "",
	} {
		if got := UnitOf(v, roots); got != want {
			t.Errorf("UnitOf(%s) = %q, want %q", v, got, want)
		}
	}
}

func TestShowValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		unit string
		want string
	}{{1.66046, "ms", "1.66 ms"}, {16.0, "count", "16"}, {"x", "", `"x"`}, {true, "", "true"}, {12345.6, "1/s", "12350 1/s"}, {4294967295.0, "", "4294967295"}, {0.123456, "", "0.1235"}} {
		if got := ShowValue(c.v, c.unit); got != c.want {
			t.Errorf("ShowValue(%v, %q) = %s, want %s", c.v, c.unit, got, c.want)
		}
	}
}
