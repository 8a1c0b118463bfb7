package dsl

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// convertJSONLike sets *dst (dst a pointer) to what json.Unmarshal(json.Marshal(raw), dst)
// would, without the JSON text in between, for the shapes that step parameters take: raw as
// decoded from CUE (maps, lists, strings, bools, int64 and float64 numbers, nil) into structs
// with json tags, their embedded structs, pointers, slices, string-keyed maps, any, and
// types that unmarshal themselves (whose UnmarshalJSON gets the value's JSON, as with
// json.Unmarshal). It reports false, having perhaps set part of *dst, when raw or the type
// holds anything else, or when json.Unmarshal would fail or match a name other than exactly:
// the caller then does the round trip on a fresh value, for json's own result and error.
//
// Decoding a step's parameters went through JSON text: 3-4% of a vet of the repository.
func convertJSONLike(raw any, dst any) bool {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	return convertValue(raw, rv.Elem())
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func convertValue(raw any, v reflect.Value) bool {
	pt := reflect.PointerTo(v.Type())
	if pt.Implements(jsonUnmarshalerType) {
		if raw == nil {
			return false // json's handling of null for such types: left to json
		}
		// The round trip gave it this value's part of json.Marshal(raw): the same text.
		b, err := json.Marshal(raw)
		if err != nil {
			return false
		}
		return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b) == nil
	}
	if pt.Implements(textUnmarshalerType) {
		s, ok := raw.(string)
		if !ok || !utf8.ValidString(s) {
			return false
		}
		return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)) == nil
	}
	if raw == nil {
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		return true // null leaves anything else as it is
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := raw.(string)
		if !ok || !utf8.ValidString(s) {
			return false
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return false
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := integer(raw)
		if !ok || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case reflect.Float64:
		switch x := raw.(type) {
		case int64:
			v.SetFloat(float64(x))
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return false // json.Marshal fails
			}
			v.SetFloat(x)
		default:
			return false
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return convertValue(raw, v.Elem())
	case reflect.Slice:
		a, ok := raw.([]any)
		if !ok {
			return false
		}
		s := reflect.MakeSlice(v.Type(), len(a), len(a))
		for i, e := range a {
			if !convertValue(e, s.Index(i)) {
				return false
			}
		}
		v.Set(s)
	case reflect.Map:
		m, ok := raw.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String || v.Type().Key().Implements(textUnmarshalerType) || reflect.PointerTo(v.Type().Key()).Implements(textUnmarshalerType) {
			return false
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(v.Type(), len(m)))
		}
		et := v.Type().Elem()
		for k, e := range m {
			if !utf8.ValidString(k) {
				return false
			}
			ev := reflect.New(et).Elem()
			if !convertValue(e, ev) {
				return false
			}
			v.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), ev)
		}
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return false
		}
		x, ok := jsonAny(raw)
		if !ok {
			return false
		}
		v.Set(reflect.ValueOf(&x).Elem())
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return false
		}
		fields, ok := jsonFields(v.Type())
		if !ok {
			return false
		}
		for k, e := range m {
			index, ok := fields[k]
			if !ok {
				return false // json would match it case-insensitively, or drop it
			}
			if !convertValue(e, v.FieldByIndex(index)) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// integer is raw as an int64 when json would read it into an integer.
func integer(raw any) (int64, bool) {
	switch x := raw.(type) {
	case int64:
		return x, true
	case float64:
		// json.Marshal writes an integral float64 below 1e21 as an integer.
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), true
		}
	}
	return 0, false
}

// jsonAny is what json.Unmarshal gives an any for raw: numbers as float64, new maps and lists.
func jsonAny(raw any) (any, bool) {
	switch x := raw.(type) {
	case nil, bool:
		return x, true
	case string:
		return x, utf8.ValidString(x)
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			var ok bool
			if out[i], ok = jsonAny(e); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			v, ok := jsonAny(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = v
		}
		return out, true
	}
	return nil, false
}

// jsonFieldCache holds jsonFields by type.
var jsonFieldCache sync.Map // reflect.Type → fieldIndex

type fieldIndex struct {
	byName map[string][]int
	ok     bool
}

// jsonFields maps the JSON names of a struct's fields (embedded structs' fields promoted) to
// their indices, as json.Unmarshal matches exact names. It reports false for a struct that
// json treats in a way this does not follow: a name at two depths or twice at one, a
// ",string" option, an embedded pointer or an embedded non-struct.
func jsonFields(t reflect.Type) (map[string][]int, bool) {
	if c, ok := jsonFieldCache.Load(t); ok {
		fi := c.(fieldIndex)
		return fi.byName, fi.ok
	}
	byName := map[string][]int{}
	ok := collectFields(t, nil, byName, map[reflect.Type]bool{})
	jsonFieldCache.Store(t, fieldIndex{byName, ok})
	return byName, ok
}

func collectFields(t reflect.Type, prefix []int, byName map[string][]int, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			return false
		}
		index := append(append([]int(nil), prefix...), i)
		if f.Anonymous && name == "" {
			if f.Type.Kind() != reflect.Struct {
				return false
			}
			if !collectFields(f.Type, index, byName, seen) {
				return false
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := byName[name]; dup {
			return false
		}
		byName[name] = index
	}
	return true
}
