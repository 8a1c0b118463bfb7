package dsl

import (
	"reflect"
	"sort"
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
	key, ok := namesKey(n)
	if !ok {
		return
	}
	if l.compiled == nil {
		l.compiled = map[string]map[compiledKey]*Expr{}
	}
	m := l.compiled[key]
	if m == nil {
		m = map[compiledKey]*Expr{}
		l.compiled[key] = m
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
	var b strings.Builder
	seen := map[uintptr]int{}
	ok := true
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if !ok {
			return
		}
		if b.Len() > maxNamesKey {
			ok = false // large types (an Envoy config's): writing them costs more than compiling
			return
		}
		switch v.Kind() {
		case reflect.Invalid:
			b.WriteString("~")
		case reflect.Pointer:
			switch {
			case v.IsNil():
				b.WriteString("nil")
			case v.Type().Elem() == catalogueType:
				b.WriteString("cat" + strconv.FormatUint(uint64(v.Pointer()), 16))
			default:
				if i, dup := seen[v.Pointer()]; dup {
					b.WriteString("@" + strconv.Itoa(i))
					return
				}
				seen[v.Pointer()] = len(seen)
				b.WriteByte('&')
				walk(v.Elem())
			}
		case reflect.Interface:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if v.Type() == reflectType || v.Elem().Type().Implements(reflectType) {
				if !v.CanInterface() {
					ok = false
					return
				}
				t := v.Interface().(reflect.Type)
				b.WriteString("T" + t.PkgPath() + "." + t.String())
				return
			}
			b.WriteString("(" + v.Elem().Type().String() + ")")
			walk(v.Elem())
		case reflect.Struct:
			b.WriteByte('{')
			for i := range v.NumField() {
				walk(v.Field(i))
				b.WriteByte(',')
			}
			b.WriteByte('}')
		case reflect.Slice, reflect.Array:
			if v.Kind() == reflect.Slice && v.IsNil() {
				b.WriteString("nil")
				return
			}
			b.WriteByte('[')
			for i := range v.Len() {
				walk(v.Index(i))
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case reflect.Map:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if v.Type().Key().Kind() != reflect.String {
				ok = false
				return
			}
			keys := v.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			b.WriteByte('<')
			for _, k := range keys {
				writeString(&b, k.String())
				b.WriteByte(':')
				walk(v.MapIndex(k))
				b.WriteByte(',')
			}
			b.WriteByte('>')
		case reflect.Func:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			b.WriteString("fn" + strconv.FormatUint(uint64(v.Pointer()), 16))
		case reflect.String:
			writeString(&b, v.String())
		case reflect.Bool:
			b.WriteString(strconv.FormatBool(v.Bool()))
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b.WriteString(strconv.FormatInt(v.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			b.WriteString(strconv.FormatUint(v.Uint(), 10))
		case reflect.Float32, reflect.Float64:
			b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
		default:
			ok = false // channels, unsafe pointers, complex numbers: not in names today
		}
	}
	v := reflect.ValueOf(n).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue // derived from the exported ones (vars, env) or the cache itself
		}
		b.WriteString(v.Type().Field(i).Name + "=")
		walk(v.Field(i))
		b.WriteByte(';')
	}
	return b.String(), ok
}

// writeString writes s with its length first, so that no string can pass for another's end.
func writeString(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte('"')
	b.WriteString(s)
}
