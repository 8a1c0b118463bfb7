package dsl_test

import (
	"testing"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
)

// TestQuantity: quantity() reads a Kubernetes resource quantity as a number (cpu in cores,
// memory in bytes), so that "500m" and "0.5", "1Gi" and "1024Mi" compare equal; an
// expression comparing the strings found them different (p29 item 6, not done).
func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
		err  bool
	}{
		{"500m", 0.5, false}, {"0.5", 0.5, false}, {"1Gi", 1 << 30, false}, {"1024Mi", 1 << 30, false},
		{float64(2), 2, false}, {"half", 0, true}, {nil, 0, true},
	} {
		got, err := dsl.Quantity(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("Quantity(%#v) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
	// As the judge calls it, from an expression.
	env := map[string]any{"quantity": dsl.Quantity, "cpu": "500m", "mem": "1Gi"}
	for src, want := range map[string]bool{
		"quantity(cpu) == 0.5":                true,
		"quantity(cpu) == quantity('0.5')":    true,
		"quantity(mem) == quantity('1024Mi')": true,
		"quantity(mem) > quantity('900Mi')":   true,
		"cpu == '0.5'":                        false, // the strings differ: what vet refuses
	} {
		prog, err := expr.Compile(src, expr.Env(env))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := expr.Run(prog, env)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	if _, err := expr.Eval("quantity('half') > 0", env); err == nil {
		t.Errorf("quantity('half') judged without an error")
	}
}
