package dsl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/schema"
)

// logFormat is an access-log format a scenario applies: JSON (its keys) or text.
type logFormat struct {
	where string          // where it is written: `objects.0 of step "mesh": accessLogFormat, JSON`
	keys  map[string]bool // a JSON format's keys (nil: a text format)
	text  string
	// unknown says the format is not read here (an EnvoyFilter's access_log): it may give
	// any field.
	unknown bool
}

// appliedLogFormats are the access-log formats the objects set mesh-wide or for a provider:
// the istio ConfigMap's mesh (data.mesh, YAML) and an IstioOperator's spec.meshConfig,
// accessLogFormat (JSON where accessLogEncoding is JSON) and each extensionProviders
// envoyFileAccessLog's logFormat (text or labels); and an EnvoyFilter's that adds an access_log
// of its own (envoyFilterLogFormat: unknown where it is not read). A format that is not literal
// (holds ${…}) is left out.
func appliedLogFormats(objs []applied) []logFormat {
	var out []logFormat
	for i, a := range objs {
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		var mesh map[string]any
		at := fmt.Sprintf("objects.%d of step %q", objIndex(objs, i), a.step.Name)
		switch {
		case kind == "ConfigMap" && strings.HasPrefix(name, "istio"):
			data, _ := a.obj["data"].(map[string]any)
			raw, _ := data["mesh"].(string)
			if raw == "" {
				continue
			}
			b, err := yaml.YAMLToJSON([]byte(raw))
			if err != nil || json.Unmarshal(b, &mesh) != nil {
				continue
			}
		case kind == "IstioOperator":
			spec, _ := a.obj["spec"].(map[string]any)
			mesh, _ = spec["meshConfig"].(map[string]any)
		case kind == "EnvoyFilter" && holdsKey(a.obj["spec"], "access_log"):
			out = append(out, envoyFilterLogFormat(a.obj["spec"], at+": EnvoyFilter "+name+", access_log"))
		}
		if mesh == nil {
			continue
		}
		if f, _ := mesh["accessLogFormat"].(string); f != "" && !HasInterpolation(f) {
			if enc, _ := mesh["accessLogEncoding"].(string); strings.EqualFold(enc, "JSON") {
				var m map[string]any
				if json.Unmarshal([]byte(f), &m) == nil {
					out = append(out, logFormat{where: at + ": accessLogFormat, JSON", keys: keySet(m)})
				}
			} else {
				out = append(out, logFormat{where: at + ": accessLogFormat", text: f})
			}
		}
		providers, _ := mesh["extensionProviders"].([]any)
		for _, p := range providers {
			pm, _ := p.(map[string]any)
			fal, _ := pm["envoyFileAccessLog"].(map[string]any)
			lf, _ := fal["logFormat"].(map[string]any)
			pname, _ := pm["name"].(string)
			w := fmt.Sprintf("%s: extensionProviders[name=%s].envoyFileAccessLog.logFormat", at, pname)
			if t, _ := lf["text"].(string); t != "" && !HasInterpolation(t) {
				out = append(out, logFormat{where: w + ".text", text: t})
			}
			if l, ok := lf["labels"].(map[string]any); ok {
				out = append(out, logFormat{where: w + ".labels", keys: keySet(l)})
			}
		}
	}
	return out
}

// envoyFilterLogFormat is the format of the access log an EnvoyFilter's spec adds: the
// log_format of its one access_log's typed_config (a FileAccessLog's: text_format_source's
// inline_string, text_format, or json_format's keys; the older format and json_format beside
// it too). Several access logs, one without a format (Envoy's own default then) or one not
// literal are unknown: it may give any field.
func envoyFilterLogFormat(spec any, where string) logFormat {
	unknown := logFormat{where: where, unknown: true}
	var logs []any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "access_log" {
					if l, ok := e.([]any); ok {
						logs = append(logs, l...)
					} else {
						logs = append(logs, e)
					}
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(spec)
	if len(logs) != 1 {
		return unknown
	}
	l, _ := logs[0].(map[string]any)
	tc, _ := l["typed_config"].(map[string]any)
	if tc == nil {
		return unknown
	}
	text := func(v any) (string, bool) {
		t, ok := v.(string)
		return t, ok && t != "" && !HasInterpolation(t)
	}
	keys := func(v any) (map[string]bool, bool) {
		m, ok := v.(map[string]any)
		return keySet(m), ok && len(m) > 0
	}
	if lf, ok := tc["log_format"].(map[string]any); ok {
		src, _ := lf["text_format_source"].(map[string]any)
		if t, ok := text(src["inline_string"]); ok {
			return logFormat{where: where + ": log_format.text_format_source.inline_string", text: t}
		}
		if t, ok := text(lf["text_format"]); ok {
			return logFormat{where: where + ": log_format.text_format", text: t}
		}
		if k, ok := keys(lf["json_format"]); ok {
			return logFormat{where: where + ": log_format.json_format", keys: k}
		}
		return unknown
	}
	if t, ok := text(tc["format"]); ok {
		return logFormat{where: where + ": format", text: t}
	}
	if k, ok := keys(tc["json_format"]); ok {
		return logFormat{where: where + ": json_format", keys: k}
	}
	return unknown
}

// holdsKey reports whether v, decoded JSON, has a map with key at any depth.
func holdsKey(v any, key string) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[key]; ok {
			return true
		}
		for _, e := range x {
			if holdsKey(e, key) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsKey(e, key) {
				return true
			}
		}
	}
	return false
}

func keySet(m map[string]any) map[string]bool {
	k := make(map[string]bool, len(m))
	for key := range m {
		k[key] = true
	}
	return k
}

// lacks says what f lacks to give an entry's field ("" when it gives it).
func (f logFormat) lacks(field string) string {
	op, key, ok := schema.AccessLogOp(field)
	if !ok {
		return ""
	}
	if f.keys != nil {
		if f.keys[key] {
			return ""
		}
		return fmt.Sprintf("has no key %q: read, the field has no value, and the expectation errs when it runs; add \"%s\": \"%s\" to the format", key, key, op)
	}
	has := strings.Contains(f.text, op)
	switch field {
	case "cluster":
		has = strings.Contains(f.text, "%UPSTREAM_CLUSTER")
	case "path":
		has = strings.Contains(f.text, "PATH)%")
	}
	if has {
		return ""
	}
	return fmt.Sprintf("has no %s: read, the field has no value (or the lines are not read as access lines), and the expectation errs when it runs; log in Istio's format, or read the line itself (.line contains …)", op)
}

// countField is the entry field each count of a logs result counts by.
var countField = map[string]string{"codes": "code", "flags": "flags", "details": "details"}

// lintLogFormat warns of an expression that reads an access-log entry's field, or a logs
// result's count by one, that the one access-log format the scenario applies does not give:
// the run reads such a field as no value (an error), so vet can say it before the run. With
// no format applied, several (which proxy logs in which is not known), or one it does not read
// (an EnvoyFilter's without a literal log_format), it says nothing.
func (d *decoder) lintLogFormat(objs []applied) {
	if _, ok := d.sc.LintIgnore[LintLogFormatLacks]; ok {
		return
	}
	formats := appliedLogFormats(objs)
	if len(formats) != 1 || formats[0].unknown {
		return
	}
	f := formats[0]
	for _, e := range d.exprs() {
		var fields []string
		seen := map[string]bool{}
		add := func(field string) {
			if !seen[field] {
				seen[field] = true
				fields = append(fields, field)
			}
		}
		for _, r := range e.Reads {
			if st := d.sc.Step(r.Step); st != nil {
				if _, ok := st.Params.(*schema.Logs); ok && countField[r.Field] != "" {
					add(countField[r.Field])
				}
			}
		}
		if e.Program != nil {
			ast.Find(e.Program.Node(), func(n ast.Node) bool {
				c, ok := n.(*ast.CallNode)
				if !ok || len(c.Arguments) < 3 {
					return false
				}
				if id, ok := c.Callee.(*ast.IdentifierNode); !ok || id.Value != schema.OnlyIfFunc {
					return false
				}
				cond, _ := c.Arguments[1].(*ast.StringNode)
				field, _ := c.Arguments[2].(*ast.StringNode)
				if cond != nil && field != nil && cond.Value == "access" {
					add(field.Value)
				}
				return false
			})
		}
		for _, field := range fields {
			if why := f.lacks(field); why != "" {
				d.l.warnings = append(d.l.warnings, &Warning{Pos: e.Pos, Code: LintLogFormatLacks, Scenario: d.sc.Name,
					Msg: fmt.Sprintf("in expression %q: it reads the %s of access-log entries, and the access-log format this scenario applies (%s) %s", e.Src, field, f.where, why)})
			}
		}
	}
}
