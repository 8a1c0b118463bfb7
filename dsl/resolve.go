package dsl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"labrun.dev/labrun/schema"
)

// pathSep joins the elements of a path inside a step's parameters (keys may hold dots).
const pathSep = "\x00"

// HasTemplates reports whether the step's parameters hold ${...} interpolations.
func (s *Step) HasTemplates() bool { return len(s.templates) > 0 || s.FileTemplates }

// Templates returns the step's compiled templates.
func (s *Step) Templates() []*Template {
	out := make([]*Template, 0, len(s.templates))
	for _, t := range s.templates {
		out = append(out, t)
	}
	return out
}

// Resolve returns the step's parameters with every ${...} evaluated in env, decoded into the
// kind's parameter type. Steps without interpolations return Params as loaded.
func (s *Step) Resolve(env map[string]any) (schema.Params, error) {
	return s.resolve(env, false)
}

// ResolveKnown is Resolve before a run: a ${...} whose value is nil (a capture not taken yet)
// is an error rather than an empty string.
func (s *Step) ResolveKnown(env map[string]any) (schema.Params, error) {
	return s.resolve(env, true)
}

func (s *Step) resolve(env map[string]any, strict bool) (schema.Params, error) {
	if len(s.templates) == 0 {
		return s.Params, nil
	}
	raw, err := substitute(s.raw, "", s.templates, env, strict)
	if err != nil {
		return nil, err
	}
	p := schema.Kinds[s.Kind].New()
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("%s: after interpolation: %w", s.Pos, err)
	}
	return p, nil
}

func substitute(v any, path string, ts map[string]*Template, env map[string]any, strict bool) (any, error) {
	switch x := v.(type) {
	case string:
		if t, ok := ts[path]; ok {
			if strict {
				return t.evalStrict(env)
			}
			return t.Eval(env)
		}
		return x, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := substitute(e, path+pathSep+k, ts, env, strict)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := substitute(e, path+pathSep+strconv.Itoa(i), ts, env, strict)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

var reCache sync.Map

// compileRE compiles an RE2 pattern once.
func compileRE(s string) (*regexp.Regexp, error) {
	if re, ok := reCache.Load(s); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, err
	}
	reCache.Store(s, re)
	return re, nil
}
