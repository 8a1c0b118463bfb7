package dsl

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"labrun.dev/labrun/schema"
)

// Scenarios of one load whose expressions see the same names (every exported field of Names
// alike: the named steps with their kinds and result types, the vars' values, the
// namespaces, endpoints, the target) compile every expression alike: a package of copies of
// one scenario (1,000 quickstarts compiled 8,000 expressions, a third of decoding) compiles
// each once. The compiled expressions are kept by load, by names' key (namesKey), then by
// source; each use gets its own position, as within a scenario.

// shareCompiled gives n the compiled expressions of the load's earlier scenarios whose names
// have the same key.
func (l *loader) shareCompiled(n *Names) {
	kw := &l.namesKeys
	if !kw.write(n) {
		return
	}
	// The key is looked up in the buffer's bytes and copied to a string only for a new one:
	// at 1,000 copies of a scenario, one 4.4 kB string instead of a thousand.
	m := l.compiled[string(kw.b)]
	if m == nil {
		if l.compiled == nil {
			l.compiled = map[string]map[compiledKey]*Expr{}
		}
		m = map[compiledKey]*Expr{}
		l.compiled[string(kw.b)] = m
	}
	n.compiled = m
}

// maxNamesKey bounds a key's length: names whose key is longer share nothing. A quickstart's
// is 4.4 kB.
const maxNamesKey = 16 << 10

// catalogueType is the one kind of pointer the key names by address: the catalogues of
// stats are package-level values, never changed, and large.
var catalogueType = reflect.TypeFor[schema.Catalogue]()

var reflectType = reflect.TypeFor[reflect.Type]()

// namesKey writes out every exported field of n, deeply (pointers followed, maps in key
// order, a function by its code: the schema's types hold top-level functions only, e.g. a
// load's code alias), or says it cannot (a value it does not know how to write, a key longer
// than maxNamesKey), in which case n shares nothing.
func namesKey(n *Names) (string, bool) {
	var kw namesKeyWriter
	ok := kw.write(n)
	return string(kw.b), ok
}

// namesKeyWriter writes names' keys (namesKey) into one buffer that a loader reuses from
// scenario to scenario: the key was written with a string concatenation or conversion per
// value, its maps' keys sorted as reflect.Values, a tenth of a quickstart's decoding with the
// collections its garbage caused.
type namesKeyWriter struct {
	b    []byte
	seen map[uintptr]int
	// entries is a stack of maps' entries being written: a map's are appended, sorted and
	// written above the entries of the maps that hold it, then dropped.
	entries []mapEntry
	ok      bool
}

// mapEntry is a map's entry, its key as a string (every key of names is one).
type mapEntry struct {
	k string
	v reflect.Value
}

// write writes n's key into kw.b, replacing what it held; false when n has none.
func (kw *namesKeyWriter) write(n *Names) bool {
	kw.b = kw.b[:0]
	if kw.seen == nil {
		kw.seen = map[uintptr]int{}
	}
	clear(kw.seen)
	kw.entries = kw.entries[:0]
	kw.ok = true
	v := reflect.ValueOf(n).Elem()
	t := v.Type()
	for i := range v.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // derived from the exported ones (vars, env) or the cache itself
		}
		kw.b = append(kw.b, f.Name...)
		kw.b = append(kw.b, '=')
		kw.walk(v.Field(i))
		kw.b = append(kw.b, ';')
	}
	return kw.ok
}

func (kw *namesKeyWriter) walk(v reflect.Value) {
	if !kw.ok {
		return
	}
	if len(kw.b) > maxNamesKey {
		kw.ok = false // large types (an Envoy config's): writing them costs more than compiling
		return
	}
	switch v.Kind() {
	case reflect.Invalid:
		kw.b = append(kw.b, '~')
	case reflect.Pointer:
		switch {
		case v.IsNil():
			kw.b = append(kw.b, "nil"...)
		case v.Type().Elem() == catalogueType:
			kw.b = append(kw.b, "cat"...)
			kw.b = strconv.AppendUint(kw.b, uint64(v.Pointer()), 16)
		default:
			if i, dup := kw.seen[v.Pointer()]; dup {
				kw.b = append(kw.b, '@')
				kw.b = strconv.AppendInt(kw.b, int64(i), 10)
				return
			}
			kw.seen[v.Pointer()] = len(kw.seen)
			kw.b = append(kw.b, '&')
			kw.walk(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			kw.b = append(kw.b, "nil"...)
			return
		}
		if v.Type() == reflectType || v.Elem().Type().Implements(reflectType) {
			if !v.CanInterface() {
				kw.ok = false
				return
			}
			t := v.Interface().(reflect.Type)
			kw.b = append(kw.b, 'T')
			kw.b = append(kw.b, t.PkgPath()...)
			kw.b = append(kw.b, '.')
			kw.b = append(kw.b, t.String()...)
			return
		}
		kw.b = append(kw.b, '(')
		kw.b = append(kw.b, v.Elem().Type().String()...)
		kw.b = append(kw.b, ')')
		kw.walk(v.Elem())
	case reflect.Struct:
		kw.b = append(kw.b, '{')
		for i := range v.NumField() {
			kw.walk(v.Field(i))
			kw.b = append(kw.b, ',')
		}
		kw.b = append(kw.b, '}')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			kw.b = append(kw.b, "nil"...)
			return
		}
		kw.b = append(kw.b, '[')
		for i := range v.Len() {
			kw.walk(v.Index(i))
			kw.b = append(kw.b, ',')
		}
		kw.b = append(kw.b, ']')
	case reflect.Map:
		if v.IsNil() {
			kw.b = append(kw.b, "nil"...)
			return
		}
		if v.Type().Key().Kind() != reflect.String {
			kw.ok = false
			return
		}
		base := len(kw.entries)
		for it := v.MapRange(); it.Next(); {
			kw.entries = append(kw.entries, mapEntry{it.Key().String(), it.Value()})
		}
		es := kw.entries[base:]
		slices.SortFunc(es, func(a, b mapEntry) int { return strings.Compare(a.k, b.k) })
		kw.b = append(kw.b, '<')
		for i := range es {
			// kw.entries may grow (and move) under a nested map: index it afresh.
			e := kw.entries[base+i]
			kw.writeString(e.k)
			kw.b = append(kw.b, ':')
			kw.walk(e.v)
			kw.b = append(kw.b, ',')
		}
		kw.b = append(kw.b, '>')
		clear(kw.entries[base:]) // let go of the values
		kw.entries = kw.entries[:base]
	case reflect.Func:
		if v.IsNil() {
			kw.b = append(kw.b, "nil"...)
			return
		}
		kw.b = append(kw.b, "fn"...)
		kw.b = strconv.AppendUint(kw.b, uint64(v.Pointer()), 16)
	case reflect.String:
		kw.writeString(v.String())
	case reflect.Bool:
		kw.b = strconv.AppendBool(kw.b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		kw.b = strconv.AppendInt(kw.b, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		kw.b = strconv.AppendUint(kw.b, v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		kw.b = strconv.AppendFloat(kw.b, v.Float(), 'g', -1, 64)
	default:
		kw.ok = false // channels, unsafe pointers, complex numbers: not in names today
	}
}

// writeString writes s with its length first, so that no string can pass for another's end.
func (kw *namesKeyWriter) writeString(s string) {
	kw.b = strconv.AppendInt(kw.b, int64(len(s)), 10)
	kw.b = append(kw.b, '"')
	kw.b = append(kw.b, s...)
}
