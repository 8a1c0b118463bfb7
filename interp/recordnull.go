package interp

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// NullEntries are the JSON paths of the null entries r holds where labrun always writes one
// ("steps[0]", "results.fortio", "results.busy.value.samples[3]"): an entry of a list or a
// map of the record's parts (steps, results, expectations, a series' samples, ...), and the
// value of a result whose kind records a value of its own form (a load, a snapshot, a
// series, an exec, a logs step). No run writes these; the code that reads a record reads
// them as parts, so a record that holds one is refused before anything reads it.
func (r *Record) NullEntries() []string {
	var out []string
	walkNulls(reflect.ValueOf(r).Elem(), "", &out)
	return out
}

// nullEntriesError is the error of a record that holds null entries (NullEntries).
func nullEntriesError(paths []string) error {
	const most = 5
	shown, more := paths, ""
	if len(shown) > most {
		shown, more = shown[:most], fmt.Sprintf(" and %d more", len(paths)-most)
	}
	is := "is null"
	if len(paths) > 1 {
		is = "are null"
	}
	return fmt.Errorf("%s%s %s, where a run always records an entry; the record was changed after the run or is corrupt", strings.Join(shown, ", "), more, is)
}

var (
	resultType = reflect.TypeFor[Result]()
	// partTypes caches holdsParts by type.
	partTypes sync.Map
)

// holdsParts says whether a value of type t can hold a pointer or an interface (what a null
// entry can be, or hold): a walk skips the types that cannot (a log's lines, a stat map).
func holdsParts(t reflect.Type) bool {
	if v, ok := partTypes.Load(t); ok {
		return v.(bool)
	}
	partTypes.Store(t, true) // a type that holds itself holds pointers
	holds := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		holds = true
	case reflect.Slice, reflect.Array:
		holds = holdsParts(t.Elem())
	case reflect.Map:
		holds = holdsParts(t.Key()) || holdsParts(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsParts(f.Type) {
				holds = true
				break
			}
		}
	}
	partTypes.Store(t, holds)
	return holds
}

// walkNulls appends to out the paths of the null entries v holds (see NullEntries); at is
// v's JSON path.
func walkNulls(v reflect.Value, at string, out *[]string) {
	if !holdsParts(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkNulls(v.Elem(), at, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			e := v.Index(i)
			at := fmt.Sprintf("%s[%d]", at, i)
			if e.Kind() == reflect.Pointer && e.IsNil() {
				*out = append(*out, at)
				continue
			}
			walkNulls(e, at, out)
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			e := v.MapIndex(k)
			at := joinKey(at, fmt.Sprint(k))
			if e.Kind() == reflect.Pointer && e.IsNil() {
				*out = append(*out, at)
				continue
			}
			walkNulls(e, at, out)
		}
	case reflect.Struct:
		if v.Type() == resultType {
			res := v.Interface().(Result)
			if res.null || isNilPointer(res.Value) {
				*out = append(*out, joinKey(at, "value"))
				return
			}
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			fat := at
			switch {
			case f.Anonymous && name == "":
				// an embedded struct's fields are its container's in JSON
			case name != "":
				fat = joinKey(at, name)
			default:
				fat = joinKey(at, f.Name)
			}
			walkNulls(v.Field(i), fat, out)
		}
	}
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.IsValid() && rv.Kind() == reflect.Pointer && rv.IsNil()
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// joinKey is the path of the entry key of the value at at: at.key, or at["key"] when the key
// is not a plain name.
func joinKey(at, key string) string {
	if !plainKey.MatchString(key) {
		return fmt.Sprintf("%s[%q]", at, key)
	}
	if at == "" {
		return key
	}
	return at + "." + key
}
