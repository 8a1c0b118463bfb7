package xdstype

import (
	"math"
	"strconv"
	"strings"
)

// Normalize returns v, a value of type t decoded from Envoy's proto JSON, in the form labrun
// records it: what Envoy wrote, with 64-bit integers (which proto JSON writes as strings) as
// numbers, non-finite floats as numbers, and enums written as numbers by their names. An Any
// is read as the message its "@type" names, when labrun knows it (APIVersion's API), else as
// it is; free-form JSON (metadata) as it is. Fields Envoy left out stay out: reading one gives
// its default (Select, and expressions through the config step's declared type), while
// presence — in, has, len — sees what Envoy wrote. v is not changed.
func Normalize(v any, t *Type) any {
	if t == nil {
		return v
	}
	switch t.Kind {
	case Message:
		m, ok := v.(map[string]any)
		if !ok || t.Msg == nil {
			return v
		}
		return normalizeMsg(m, t.Msg)
	case Any:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		msg := t.Msg
		if url, _ := m["@type"].(string); url != "" {
			msg = ByTypeURL(url)
		}
		if msg == nil {
			return v
		}
		return normalizeMsg(m, msg)
	case List:
		l, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = Normalize(e, t.Elem)
		}
		return out
	case Map:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = Normalize(e, t.Elem)
		}
		return out
	case Int64:
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f
			}
		}
	case Number:
		// proto JSON writes non-finite floats as strings.
		if s, ok := v.(string); ok {
			switch s {
			case "NaN":
				return math.NaN()
			case "Infinity":
				return math.Inf(1)
			case "-Infinity":
				return math.Inf(-1)
			}
		}
	case Enum:
		if n, ok := v.(float64); ok && t.Enum != nil {
			if name, ok := t.Enum.byNum[int32(n)]; ok {
				return name
			}
		}
	}
	return v
}

func normalizeMsg(m map[string]any, msg *Msg) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		if f := msg.Field(k); f != nil {
			out[k] = Normalize(e, f.Type)
		} else {
			out[k] = e // "@type", or a field of an Envoy newer than APIVersion
		}
	}
	return out
}

// DurationsAsSeconds returns v, a normalized value of type t, with every protobuf Duration
// ("0.500s") replaced by its number of seconds (0.5): only the values the type says are
// Durations (a string field that happens to end in "s" stays a string); maps and lists are
// copied. With t nil (free JSON), every string that has a Duration's form is converted.
func DurationsAsSeconds(v any, t *Type) any {
	if t != nil && t.Kind == Any {
		if m, ok := v.(map[string]any); ok {
			msg := t.Msg
			if url, _ := m["@type"].(string); url != "" {
				msg = ByTypeURL(url)
			}
			if msg == nil {
				return DurationsAsSeconds(v, nil)
			}
			t = &Type{Kind: Message, Msg: msg}
		}
	}
	switch x := v.(type) {
	case string:
		if t == nil || t.Kind == Duration {
			if f, ok := durationSeconds(x); ok {
				return f
			}
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = DurationsAsSeconds(e, fieldType(t, k))
		}
		return out
	case []any:
		var elem *Type
		if t != nil && t.Kind == List {
			elem = t.Elem
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = DurationsAsSeconds(e, elem)
		}
		return out
	}
	return v
}

// fieldType is the type of key k inside a value of type t (nil: free JSON or unknown).
func fieldType(t *Type, k string) *Type {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case Message:
		if f := t.Msg.Field(k); f != nil {
			return f.Type
		}
		if k == "@type" {
			return &Type{Kind: String}
		}
	case Map:
		return t.Elem
	}
	return nil
}

// durationSeconds parses a protobuf Duration in proto JSON: seconds with up to nine decimals
// and an "s" ("0.500s", "10s", "-1.5s").
func durationSeconds(s string) (float64, bool) {
	num, ok := strings.CutSuffix(s, "s")
	if !ok || num == "" {
		return 0, false
	}
	digits := strings.TrimPrefix(num, "-")
	whole, frac, hasFrac := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || (hasFrac && (frac == "" || len(frac) > 9 || !allDigits(frac))) {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	return f, err == nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
