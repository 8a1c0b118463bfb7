package report_test

import (
	"math"
	"os"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// A record whose expectation read +Inf, -Inf and NaN, and whose JSON-like result (a config's)
// holds NaN, is written (encoding/json refuses non-finite numbers) and read back: the values
// read as the numbers, the result's as the string it was written as.
func TestWriteNonFinite(t *testing.T) {
	rec := sampleRecord()
	rec.Expectations[0].Values = interp.Values{"a / b": math.Inf(1), "c / b": math.Inf(-1), "0 / b": math.NaN(), "s": "x", "n": 2.5}
	rec.Put("cfg", "config", false, map[string]any{"weight": math.NaN(), "list": []any{math.Inf(1), "NaN"}})
	dir := t.TempDir()
	files, err := report.Write(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"a / b": "+Inf"`, `"c / b": "-Inf"`, `"0 / b": "NaN"`, `"weight": "NaN"`, `"+Inf",`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("record has no %s:\n%s", want, b)
		}
	}
	back, err := report.Read(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	v := back.Expectations[0].Values
	if x, _ := v["a / b"].(float64); !math.IsInf(x, 1) {
		t.Errorf("a / b read back as %#v, want +Inf", v["a / b"])
	}
	if x, _ := v["c / b"].(float64); !math.IsInf(x, -1) {
		t.Errorf("c / b read back as %#v, want -Inf", v["c / b"])
	}
	if x, ok := v["0 / b"].(float64); !ok || !math.IsNaN(x) {
		t.Errorf("0 / b read back as %#v, want NaN", v["0 / b"])
	}
	if v["s"] != "x" || v["n"] != 2.5 {
		t.Errorf("other values read back as %#v", v)
	}
	if back.Results["cfg"] == nil {
		t.Error("the config result was not read back")
	}
}
