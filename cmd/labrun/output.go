package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// The formats of -o: text for people; json and yaml for machines, the same documents in two
// notations (docs/json.md describes them; YAML's keys are JSON's, sorted).

// checkOutput refuses an -o that names no format.
func checkOutput(output string) error {
	switch output {
	case "text", "json", "yaml":
		return nil
	}
	return &exitError{exitInvalid, fmt.Sprintf("--output %q: expected text, json or yaml%s", output, dsl.DidYouMean(output, []string{"text", "json", "yaml"}))}
}

// machine says whether output is for machines (json, yaml).
func machine(output string) bool { return output == "json" || output == "yaml" }

// docWriter writes documents one after another: JSON one per line (lines: a stream a program
// reads line by line) or indented; YAML separated by "---".
type docWriter struct {
	w      io.Writer
	output string
	lines  bool
	n      int
}

func (d *docWriter) write(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if !d.lines {
		enc.SetIndent("", "  ")
	}
	err := enc.Encode(v)
	if rec, ok := v.(*interp.Record); ok && interp.IsNonFinite(err) {
		b.Reset()
		err = enc.Encode(rec.WithFiniteJSON()) // as its report's JSON has it
	}
	if err != nil {
		return err
	}
	d.n++
	if d.output != "yaml" {
		_, err := d.w.Write(b.Bytes())
		return err
	}
	y, err := yaml.JSONToYAML(b.Bytes())
	if err != nil {
		return err
	}
	if d.n > 1 {
		if _, err := io.WriteString(d.w, "---\n"); err != nil {
			return err
		}
	}
	_, err = d.w.Write(y)
	return err
}

// printDoc writes v to stdout in output's notation (json or yaml).
func (p *process) printDoc(output string, v any) {
	_ = (&docWriter{w: p.Stdout, output: output}).write(v)
}
