package dsl

import (
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestScenariosShareCompiledExpressions: copies of one scenario in a package compile each
// expression once (the second copy's programs are the first's), and each copy comes out as it
// does when it is the only scenario decoded (field by field, positions its own); a scenario
// whose names differ (another step name) shares nothing.
func TestScenariosShareCompiledExpressions(t *testing.T) {
	dir := t.TempDir()
	if err := writeGrowthTree(dir, 3, false); err != nil {
		t.Fatal(err)
	}
	res, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 3 || len(res.Scenarios[0].Expect) == 0 {
		t.Fatalf("scenarios %v", res.Scenarios)
	}
	a, b := res.Scenarios[0], res.Scenarios[1]
	for i := range a.Expect {
		if a.Expect[i].Program != b.Expect[i].Program {
			t.Errorf("expect.%d compiled twice", i)
		}
		if a.Expect[i].Pos == b.Expect[i].Pos {
			t.Errorf("expect.%d: both at %v", i, a.Expect[i].Pos)
		}
	}
	alone, err := Load([]string{filepath.Join(dir, "s0001.cue")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The caches themselves hold each program as first compiled (at the first copy's
	// position); every use gets its own.
	for _, sc := range append(res.Scenarios, alone.Scenarios...) {
		sc.ExprNames.compiled = nil
		sc.exprNames.compiled = nil
	}
	if d1, d2 := dump(b), dump(alone.Scenarios[0]); d1 != d2 {
		t.Fatalf("the second copy differs from the copy decoded alone:\n%s", firstDiff(d2, d1))
	}

	ka, _ := namesKey(a.ExprNames)
	if kb, ok := namesKey(b.ExprNames); !ok || ka != kb {
		t.Fatalf("copies' keys differ (ok %v)", ok)
	}
	other := *a.ExprNames
	other.Steps = map[string]bool{"x": true}
	if ko, _ := namesKey(&other); ko == ka {
		t.Fatal("names with other steps have the same key")
	}
}

// TestDecodeValueBySyntax: a scenario's local world and survivors (and the survivors' keys'
// positions) read from the syntax are what CUE's Decode and lookups give, for every scenario of examples/, scenarios/ and docs/.
func TestDecodeValueBySyntax(t *testing.T) {
	load := func() []*Scenario {
		var out []*Scenario
		for _, dir := range []string{"../examples", "../examples/istio-tasks", "../scenarios", "../docs"} {
			res, err := Load([]string{dir}, Options{})
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			out = append(out, res.Scenarios...)
		}
		return out
	}
	bySyntax := load()
	decodeBySyntax = false
	defer func() { decodeBySyntax = true }()
	byDecode := load()
	if len(bySyntax) != len(byDecode) || len(bySyntax) < 50 {
		t.Fatalf("%d and %d scenarios", len(bySyntax), len(byDecode))
	}
	locals, survivors := 0, 0
	for i, a := range bySyntax {
		b := byDecode[i]
		if a.Local != nil {
			locals++
		}
		if da, db := dump(a.Local), dump(b.Local); da != db {
			t.Errorf("%s: local differs:\n%s", a.Name, firstDiff(db, da))
		}
		if da, db := dump(a.Survivors), dump(b.Survivors); da != db {
			t.Errorf("%s: survivors differ:\n%s", a.Name, firstDiff(db, da))
		}
		if da, db := dump(a.SurvivorPos), dump(b.SurvivorPos); da != db {
			t.Errorf("%s: survivors' positions differ:\n%s", a.Name, firstDiff(db, da))
		}
		if len(a.Survivors) > 0 {
			survivors++
		}
	}
	if locals < 10 || survivors < 5 {
		t.Fatalf("%d scenarios with a local world, %d with survivors", locals, survivors)
	}
}

// TestNamesKeyAsWritten: the key namesKeyWriter writes into its reused buffer is, byte for
// byte, the key as first written (namesKeyByStrings: a string concatenation per value, maps'
// keys sorted as reflect.Values), for every scenario of examples/, scenarios/ and docs/ and
// the growth tree's copies, one writer reused across all of them as a load reuses it: no
// part of one scenario's key is left in another's.
func TestNamesKeyAsWritten(t *testing.T) {
	dir := t.TempDir()
	if err := writeGrowthTree(dir, 2, false); err != nil {
		t.Fatal(err)
	}
	var kw namesKeyWriter
	n := 0
	for _, d := range []string{"../examples", "../examples/istio-tasks", "../scenarios", "../docs", dir} {
		res, err := Load([]string{d}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, sc := range res.Scenarios {
			want, wantOK := namesKeyByStrings(sc.ExprNames)
			ok := kw.write(sc.ExprNames)
			if got := string(kw.b); ok != wantOK || (ok && got != want) {
				t.Errorf("%s: key (ok %v) differs from the key as first written (ok %v):\n%s", sc.Name, ok, wantOK, firstDiff(want, got))
			}
			if got, ok := namesKey(sc.ExprNames); ok != wantOK || (ok && got != want) {
				t.Errorf("%s: namesKey differs from the key as first written", sc.Name)
			}
			n++
		}
	}
	if n < 50 {
		t.Fatalf("%d scenarios", n)
	}
}

// namesKeyByStrings is namesKey as first written, the reference of TestNamesKeyAsWritten.
func namesKeyByStrings(n *Names) (string, bool) {
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
				refWriteString(&b, k.String())
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
			refWriteString(&b, v.String())
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

func refWriteString(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte('"')
	b.WriteString(s)
}
