package dsl

import (
	"reflect"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
)

// TestSyntaxValue checks the syntax decoding against CUE's own Decode, field by field: plain
// data is decoded from the syntax alone (with no CUE value to fall back on), everything else
// gives what Decode gives, and a value that does not decode is left to Decode.
func TestSyntaxValue(t *testing.T) {
	src := `
s: "plain"
esc: "tab\tnl\nq\"u\u00e9 \\ end"
raw: #"a "quoted" \n kept"#
multi: """
	line one
	  line two
	"""
empty: ""
i: 42
zero: 0
big: 9223372036854775807
f: 1.50
e: 1e3
f2: 0.1
t: true
no: false
n: null
list: [1, "a", [true, null], {x: 1}]
emptyList: []
emptyStruct: {}
nested: {a: {b: {c: "d"}}, "quoted-label": 1, "a.b": 2}
short: x: y: 3
withAttr: {a: 1 @foo(bar)}
// Left to CUE:
bytes: 'abc'
under: 1_000
hex: 0x10
neg: -1
kilo: 1Ki
ref: s
expr: 1 + 2
interp: "\(i)"
opt: {a?: 1}
req: {a!: 1}
hidden: {_a: 1, b: 2}
def: {#a: 1, b: 2}
dup: {a: {x: 1}, a: {y: 2}}
ellipsis: {a: 1, ...}
openList: [1, ...]
comp: {if true {a: 1}}
letx: {let y = 1, a: y}
embed: {{a: 1}}
dyn: {("a"): 1}
disj: *"a" | "b"
mixed: {a: 1, b: s, c: [1, i, {x: "\(s)"}], d: {if true {e: 1}}, f: {g: {h: [ref, {k: 1}]}}}
mixedList: [1, s, [i, 2], {a: [...int]}]
// Not decodable at all:
nc: {a: 1, b: string}
ncList: [1, int]
ncRef: {a: 1, b: nc}
topNC: string
`
	decodable := map[string]bool{
		"s": true, "esc": true, "raw": true, "multi": true, "empty": true, "i": true, "zero": true,
		"big": true, "f": true, "e": true, "f2": true, "t": true, "no": true, "n": true, "list": true,
		"emptyList": true, "emptyStruct": true, "nested": true, "short": true, "withAttr": true,
	}
	// Left to the Decode of the whole: an error (Decode says which), or not concrete at
	// all (Decode gives nil).
	undecodable := map[string]bool{"req": true, "nc": true, "ncList": true, "ncRef": true, "topNC": true}
	v := cuecontext.New().CompileString(src)
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for it.Next() {
		name := it.Selector().String()
		seen++
		f, ok := it.Value().Source().(*ast.Field)
		if !ok {
			t.Fatalf("%s: source %T, want *ast.Field", name, it.Value().Source())
		}
		var want any
		werr := it.Value().Decode(&want)
		if _, ok := syntaxValue(f.Value, cue.Value{}, nil); ok != decodable[name] {
			t.Errorf("%s: decoded from the syntax alone = %v, want %v", name, ok, decodable[name])
		}
		got, ok := syntaxValue(f.Value, it.Value(), nil)
		if ok != !undecodable[name] {
			t.Errorf("%s: decoded = %v, want %v", name, ok, !undecodable[name])
			continue
		}
		if !ok {
			continue // left to Decode
		}
		if werr != nil {
			t.Errorf("%s: decoded, Decode's error: %v", name, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, Decode gives %#v", name, got, want)
		}
	}
	if seen < 40 {
		t.Fatalf("%d fields seen", seen)
	}
}
