// Package kubeshape knows the field names of Kubernetes objects, so that a name an expression
// reads below a get step's object can be checked: a misspelled name would read as nil (absent)
// and pass a claim over the wrong thing. A built-in kind's shape comes from k8s.io/api's Go
// types: those of core/v1 and apps/v1 (the groups labrun links) by reflection, those of the
// other stable groups (batch/v1, networking.k8s.io/v1, autoscaling/v2, …) from groups.json.gz,
// which ./gen writes by the same reflection (linking those groups would grow labrun's binary
// and startup: cmd/labrun's TestLinksTwoAPIGroups). A custom resource's shape comes from its
// CRD's openAPIV3Schema.
package kubeshape

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"labrun.dev/labrun/internal/didyoumean"
)

// Kind is the shape of a value.
type Kind uint8

// The shapes.
const (
	// Opaque holds anything: free-form JSON, a field that keeps unknown fields.
	Opaque Kind = iota
	// Object has the named Fields only.
	Object
	// Map has any key, each value of shape Elem.
	Map
	// List has elements of shape Elem.
	List
	// Scalar is a string, number or bool (a timestamp, a quantity, an int-or-string too).
	Scalar
)

// Shape is what names a value has below it.
type Shape struct {
	Kind   Kind
	Fields map[string]*Shape
	Elem   *Shape
	// Scalar is the JSON type of a Scalar, where its Go type or its schema's type says
	// (AnyScalar for a timestamp, an int-or-string, bytes; QuantityScalar for a resource
	// quantity, which is a string or a number; IntegerScalar for a Go integer type's, a CRD's
	// type: integer). groups.json.gz and istio.json.gz keep it as the reflection and the CRDs
	// give it.
	Scalar ScalarType
	// Enum are the values a string Scalar may take, when its CRD's schema lists them (an
	// Istio enum: loadBalancer.simple); any when none. The API server refuses another.
	Enum []string
	// Min and Max bound an IntegerScalar: its Go type's range (int32's for a Deployment's
	// replicas), or its CRD's format (int32, int64) narrowed by its minimum and maximum.
	Min, Max int64
	// Format names an IntegerScalar's range where it is a Go type's ("int32"), or a CRD's
	// format ("format int32"); "" where its CRD's minimum and maximum set it.
	Format string
}

// ScalarType is the JSON type of a scalar.
type ScalarType uint8

// The scalar types.
const (
	AnyScalar ScalarType = iota
	StringScalar
	NumberScalar
	BoolScalar
	// QuantityScalar is a resource quantity (resource.Quantity: cpu "500m", memory "1Gi"),
	// written as a string or a number; the API server returns it canonical ("0.5" is 500m,
	// 1024Mi is 1Gi), so it compares as a quantity, not as written (see Quantity).
	QuantityScalar
	// IntegerScalar is a whole number within Shape.Min and Shape.Max: a Go integer field's
	// (the API server cannot decode 2.5 or 3000000000 into an int32), a CRD's type: integer
	// (its schema refuses 1.5, its minimum and maximum what is outside them).
	IntegerScalar
)

func (t ScalarType) String() string {
	return [...]string{"a scalar", "a string", "a number", "a bool", "a quantity", "an integer"}[t]
}

var (
	opaque       = &Shape{Kind: Opaque}
	scalar       = &Shape{Kind: Scalar}
	scalarString = &Shape{Kind: Scalar, Scalar: StringScalar}
	scalarNumber = &Shape{Kind: Scalar, Scalar: NumberScalar}
	scalarBool   = &Shape{Kind: Scalar, Scalar: BoolScalar}
	// scalarQuantity is a resource.Quantity's shape.
	scalarQuantity = &Shape{Kind: Scalar, Scalar: QuantityScalar}
	// The shapes of Go's integer types (goShape): one each.
	intShapes = map[reflect.Kind]*Shape{
		reflect.Int8:   integer("int8", math.MinInt8, math.MaxInt8),
		reflect.Int16:  integer("int16", math.MinInt16, math.MaxInt16),
		reflect.Int32:  integer("int32", math.MinInt32, math.MaxInt32),
		reflect.Int64:  integer("int64", math.MinInt64, math.MaxInt64),
		reflect.Int:    integer("int64", math.MinInt64, math.MaxInt64),
		reflect.Uint8:  integer("uint8", 0, math.MaxUint8),
		reflect.Uint16: integer("uint16", 0, math.MaxUint16),
		reflect.Uint32: integer("uint32", 0, math.MaxUint32),
		// A uint64 above int64's range is not told apart: no kind vet knows has one.
		reflect.Uint64: integer("uint64", 0, math.MaxInt64),
		reflect.Uint:   integer("uint64", 0, math.MaxInt64),
	}
)

// integer is the shape of an integer from lo to hi, the range of format (a Go or OpenAPI
// integer type's name; "" for a CRD's minimum and maximum).
func integer(format string, lo, hi int64) *Shape {
	return &Shape{Kind: Scalar, Scalar: IntegerScalar, Format: format, Min: lo, Max: hi}
}

// integerMiss says why v, a number, is no integer of shape s (not whole, out of its range);
// "" when it is one. formatOnly says only a CRD's format refuses it: the API server's schema
// check takes any integer as one of format int32 and keeps it, and what reads the field
// (Istio's int32) cannot.
func (s *Shape) integerMiss(v any) (msg string, formatOnly bool) {
	msg = s.integerMissMsg(v)
	return msg, msg != "" && strings.HasPrefix(s.Format, "format ") && !strings.Contains(msg, "whole")
}

func (s *Shape) integerMissMsg(v any) string {
	var f float64
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if i < s.Min || i > s.Max {
				return s.outOfRange(x.String())
			}
			return ""
		}
		var err error
		if f, err = x.Float64(); err != nil {
			return ""
		}
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case uint32:
		f = float64(x)
	default:
		return ""
	}
	b, _ := json.Marshal(v)
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return fmt.Sprintf("is an integer: %s is not a whole number", b)
	}
	if f < float64(s.Min) || f > float64(s.Max) {
		return s.outOfRange(string(b))
	}
	return ""
}

func (s *Shape) outOfRange(v string) string {
	if s.Format != "" {
		of := s.Format
		if !strings.HasPrefix(of, "format ") {
			of = "type " + of
		}
		return fmt.Sprintf("is an integer of %s (%d to %d): %s is out of its range", of, s.Min, s.Max, v)
	}
	return fmt.Sprintf("is an integer from %d to %d: %s is out of that range", s.Min, s.Max, v)
}

// Quantity parses v, a quantity written as a string or a number (as JSON decodes it: "500m",
// 0.5, 1), as the API server does; false when v is no quantity.
func Quantity(v any) (resource.Quantity, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'f', -1, 32)
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case uint32:
		s = strconv.FormatUint(uint64(x), 10)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// SameQuantity says a and b, each a quantity written as a string or a number, are the same
// quantity ("0.5" and "500m", "1Gi" and "1024Mi", 1 and "1"); false when either is none.
func SameQuantity(a, b any) bool {
	qa, ok := Quantity(a)
	if !ok {
		return false
	}
	qb, ok := Quantity(b)
	return ok && qa.Cmp(qb) == 0
}

// scalarTypeOf is the JSON type of a scalar value written in a partial object (AnyScalar for
// any other value).
func scalarTypeOf(v any) ScalarType {
	switch v.(type) {
	case string:
		return StringScalar
	case bool:
		return BoolScalar
	case float64, float32, int, int64, int32, uint64, uint32, json.Number:
		return NumberScalar
	}
	return AnyScalar
}

// Miss is a name a path reads that its value does not have.
type Miss struct {
	// At is the index in the path of the name that is not there.
	At int
	// Msg says why, after the value's path: "has no field x (did you mean y?)".
	Msg string
	// Value says the value written is wrong (its type, a value its enum has not), not the
	// name: an error is best placed at the value.
	Value bool
	// BoolForString says the value is a bool where a string belongs: in YAML, an unquoted on,
	// off, yes or no.
	BoolForString bool
	// Release says another release of the kind's schema may not have the miss: a name it has
	// not, or a value its enum has not (a newer Istio may serve them; a field's type stays).
	Release bool
}

// Walk follows path (object field names, map keys, list indexes written as numbers or "*"
// for any element) from s;
// nil when every name can be there (an opaque value holds any).
func (s *Shape) Walk(path []string) *Miss {
	for i, name := range path {
		if name == "*" && s.Kind != List && s.Kind != Map {
			return nil // a closure over what is no list: expr says
		}
		switch s.Kind {
		case Opaque:
			return nil
		case Object:
			f := s.Fields[name]
			if f == nil {
				names := s.FieldNames()
				if m := didyoumean.Closest(name, names); m != "" {
					return &Miss{At: i, Msg: fmt.Sprintf("has no field %s (did you mean %s?)", name, m), Release: true}
				}
				return &Miss{At: i, Msg: fmt.Sprintf("has no field %s; its fields: %s", name, strings.Join(names, ", ")), Release: true}
			}
			s = f
		case Map:
			s = s.Elem
		case List:
			if _, err := strconv.Atoi(name); err != nil && name != "*" {
				return &Miss{At: i, Msg: fmt.Sprintf("is a list: it has no field %s; index it or go through it with all, any, filter, map", name)}
			}
			s = s.Elem
		case Scalar:
			if _, err := strconv.Atoi(name); err == nil {
				return nil // an index into a string: a byte of it
			}
			return &Miss{At: i, Msg: fmt.Sprintf("is a scalar: it has no field %s", name)}
		}
		if s == nil {
			return nil
		}
	}
	return nil
}

// At is the shape at path (nil when a name is missing; opaque below an opaque value).
func (s *Shape) At(path []string) *Shape {
	for _, name := range path {
		switch s.Kind {
		case Opaque:
			return s
		case Object:
			s = s.Fields[name]
		case Map, List:
			s = s.Elem
		default:
			return nil
		}
		if s == nil {
			return nil
		}
	}
	return s
}

// FieldNames are an object's field names, sorted.
func (s *Shape) FieldNames() []string {
	names := make([]string, 0, len(s.Fields))
	for k := range s.Fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ListOf is a list of s (a get by selector).
func ListOf(s *Shape) *Shape { return &Shape{Kind: List, Elem: s} }

var builtin struct {
	once   sync.Once
	scheme *runtime.Scheme
	mu     sync.Mutex
	shapes map[reflect.Type]*Shape
}

func theScheme() *runtime.Scheme {
	builtin.once.Do(func() {
		s := runtime.NewScheme()
		_ = corev1.AddToScheme(s)
		_ = appsv1.AddToScheme(s)
		builtin.scheme = s
		builtin.shapes = map[reflect.Type]*Shape{}
	})
	return builtin.scheme
}

// Builtin is the shape of a built-in kind's object (core/v1, apps/v1 and the other stable
// groups of k8s.io/api: groupKinds), by kind ("Pod"; also as kubectl takes a resource name:
// "pod", "pods", or its short name: "po", "hpa") and apiVersion ("" for any: core/v1 and apps/v1 first, then the other groups
// in the order of groupKinds, which puts a group's preferred version first); the kind's name as
// the API spells it; nil for any other kind (a custom resource: its CRD says).
func Builtin(apiVersion, kind string) (*Shape, string) {
	key := apiVersion + " " + kind
	if r, ok := builtinFound.Load(key); ok {
		r := r.(builtinResult)
		return r.shape, r.name
	}
	sh, name := findBuiltin(apiVersion, kind)
	builtinFound.Store(key, builtinResult{sh, name})
	return sh, name
}

// builtinFound holds what Builtin found of each apiVersion and kind asked: vet asks of every
// object each apply writes, and a core/v1 kind is looked for among the scheme's known types
// (a new map each time).
var builtinFound sync.Map

type builtinResult struct {
	shape *Shape
	name  string
}

func findBuiltin(apiVersion, kind string) (*Shape, string) {
	low := strings.ToLower(kind)
	if k := ShortKind(low); k != "" {
		low = strings.ToLower(k) // hpa, svc, deploy: as kubectl takes them
	}
	if apiVersion == "" || apiVersion == "v1" || apiVersion == "apps/v1" {
		s := theScheme()
		for _, gv := range []k8sschema.GroupVersion{corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion} {
			if apiVersion != "" && apiVersion != gv.String() {
				continue
			}
			for name, t := range s.KnownTypes(gv) {
				if strings.HasSuffix(name, "List") || strings.HasSuffix(name, "Options") || !isObject(t) || !namesKind(low, name) {
					continue
				}
				builtin.mu.Lock()
				sh := goShape(t)
				builtin.mu.Unlock()
				return sh, name
			}
		}
	}
	for _, gk := range groupKinds {
		if (apiVersion != "" && apiVersion != gk.apiVersion) || !namesKind(low, gk.kind) {
			continue
		}
		// Only now, for a kind of those groups, are their shapes decoded.
		if shapes := groupShapes(); gk.shape < len(shapes) {
			return shapes[gk.shape], gk.kind
		}
		return nil, ""
	}
	return nil, ""
}

// namesKind says low (lower case) names kind as kubectl takes it: the kind, or its resource's
// plural (pods, ingresses, networkpolicies).
func namesKind(low, kind string) bool {
	l := strings.ToLower(kind)
	return low == l || low == l+"s" || low == l+"es" || (strings.HasSuffix(l, "y") && low == strings.TrimSuffix(l, "y")+"ies")
}

// GoShape is the shape of Go type t's JSON as Builtin reads a core/v1 or apps/v1 kind's: by
// json tags, inline structs merged, timestamps, quantities and int-or-strings scalars, []byte
// a scalar, RawExtension and interfaces opaque. A type is one *Shape wherever it is (a type
// that holds itself is a cycle). ./gen writes the other groups' shapes with it.
func GoShape(t reflect.Type) *Shape {
	theScheme()
	builtin.mu.Lock()
	defer builtin.mu.Unlock()
	return goShape(t)
}

// isObject says t is a kind's object: it has ObjectMeta.
func isObject(t reflect.Type) bool {
	f, ok := t.FieldByName("ObjectMeta")
	return ok && f.Type == reflect.TypeFor[metav1.ObjectMeta]()
}

var (
	marshaler = reflect.TypeFor[json.Marshaler]()
	scalars   = map[reflect.Type]bool{
		reflect.TypeFor[metav1.Time]():        true,
		reflect.TypeFor[metav1.MicroTime]():   true,
		reflect.TypeFor[metav1.Duration]():    true,
		reflect.TypeFor[intstr.IntOrString](): true,
	}
)

// goShape is the shape of Go type t's JSON (by its json tags); the caller holds builtin.mu.
func goShape(t reflect.Type) *Shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if sh, ok := builtin.shapes[t]; ok {
		return sh
	}
	if scalars[t] {
		return scalar
	}
	if t == reflect.TypeFor[resource.Quantity]() {
		return scalarQuantity
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
			return opaque // RawExtension, JSON: free-form
		}
		sh := &Shape{Kind: Object, Fields: map[string]*Shape{}}
		builtin.shapes[t] = sh // before its fields: a type may hold itself
		addFields(sh, t)
		return sh
	case reflect.Map:
		return &Shape{Kind: Map, Elem: goShape(t.Elem())}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return scalar // []byte: base64
		}
		return &Shape{Kind: List, Elem: goShape(t.Elem())}
	case reflect.Interface:
		return opaque
	case reflect.String:
		return scalarString
	case reflect.Bool:
		return scalarBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return intShapes[t.Kind()]
	case reflect.Float32, reflect.Float64:
		return scalarNumber
	}
	return scalar
}

func addFields(sh *Shape, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") || (name == "" && f.Anonymous) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(sh, ft)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		sh.Fields[name] = goShape(f.Type)
	}
}

// objectMeta is metadata's shape, which a CRD's schema leaves out.
func objectMeta() *Shape {
	theScheme()
	builtin.mu.Lock()
	defer builtin.mu.Unlock()
	return goShape(reflect.TypeFor[metav1.ObjectMeta]())
}

// FromCRD is the shape of a custom resource's object from its version's openAPIV3Schema
// (decoded JSON): properties are its fields, additionalProperties makes an open map,
// x-kubernetes-preserve-unknown-fields keeps any name, items are a list's elements; metadata,
// apiVersion and kind are every object's.
func FromCRD(openAPIV3Schema map[string]any) *Shape {
	sh := openAPIShape(openAPIV3Schema)
	if sh.Kind != Object {
		return sh
	}
	sh.Fields["metadata"] = objectMeta()
	sh.Fields["apiVersion"] = scalar
	sh.Fields["kind"] = scalar
	return sh
}

func openAPIShape(s map[string]any) *Shape {
	if s == nil {
		return opaque
	}
	if b, _ := s["x-kubernetes-preserve-unknown-fields"].(bool); b {
		return opaque
	}
	if b, _ := s["x-kubernetes-int-or-string"].(bool); b {
		// A resource.Quantity's schema, as controller-gen writes it: int-or-string with the
		// quantity pattern (its suffixes Ki…Ei).
		if p, _ := s["pattern"].(string); strings.Contains(p, "[KMGTPE]i") {
			return scalarQuantity
		}
		return scalar
	}
	switch s["type"] {
	case "object", nil:
		if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
			sh := &Shape{Kind: Object, Fields: map[string]*Shape{}}
			for k, v := range props {
				m, _ := v.(map[string]any)
				sh.Fields[k] = openAPIShape(m)
			}
			return sh
		}
		switch ap := s["additionalProperties"].(type) {
		case map[string]any:
			return &Shape{Kind: Map, Elem: openAPIShape(ap)}
		case bool:
			if ap {
				return &Shape{Kind: Map, Elem: opaque}
			}
		}
		return opaque
	case "array":
		m, _ := s["items"].(map[string]any)
		return &Shape{Kind: List, Elem: openAPIShape(m)}
	case "string":
		if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
			sh := &Shape{Kind: Scalar, Scalar: StringScalar}
			for _, e := range enum {
				str, ok := e.(string)
				if !ok {
					return scalarString // an enum of other values: not checked
				}
				sh.Enum = append(sh.Enum, str)
			}
			return sh
		}
		return scalarString
	case "integer":
		return crdInteger(s)
	case "number":
		return scalarNumber
	case "boolean":
		return scalarBool
	}
	return scalar
}

// crdInteger is the shape of a CRD's type: integer, by its format (int32; int64 without one)
// and its minimum and maximum where it has them (Istio's uint32 fields: 0 to 4294967295).
func crdInteger(s map[string]any) *Shape {
	sh := integer("int64", math.MinInt64, math.MaxInt64)
	if s["format"] == "int32" {
		sh = integer("format int32", math.MinInt32, math.MaxInt32)
	}
	if lo, ok := s["minimum"].(float64); ok && lo > float64(sh.Min) && lo == math.Trunc(lo) {
		sh.Min, sh.Format = int64(lo), ""
		if ex, _ := s["exclusiveMinimum"].(bool); ex {
			sh.Min++
		}
	}
	if hi, ok := s["maximum"].(float64); ok && hi < float64(sh.Max) && hi == math.Trunc(hi) {
		sh.Max, sh.Format = int64(hi), ""
		if ex, _ := s["exclusiveMaximum"].(bool); ex {
			sh.Max--
		}
	}
	return sh
}

// Check walks v, a partial object (a wait's match: maps, lists, scalars), against s and calls
// miss for every name v has that s has not, with its path (list elements by index), and every
// scalar that never equals its field's (another JSON type, a value its enum has not).
func (s *Shape) Check(v any, miss func(path []string, m *Miss)) {
	s.check(v, nil, false, miss)
}

// CheckObject walks v, a whole object an apply writes, against s as Check does, and says of
// each wrong field that the API server refuses it (or, where the schema keeps what it does not
// know, drops it); a scalar where an object or a list belongs, or one where a scalar belongs,
// is wrong too.
func (s *Shape) CheckObject(v any, miss func(path []string, m *Miss)) {
	s.check(v, nil, true, miss)
}

func (s *Shape) check(v any, path []string, whole bool, miss func([]string, *Miss)) {
	if s == nil {
		return
	}
	// never is what a wrong value does: a match's never equals the field; an applied one
	// is refused.
	never := "never equals it"
	if whole {
		never = "the API server refuses it"
	}
	switch x := v.(type) {
	case map[string]any:
		if whole && len(path) > 0 && (s.Kind == List || s.Kind == Scalar) {
			miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is %s, not an object: %s", s.describe(), never)})
			return
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := append(path[:len(path):len(path)], k)
			if m := s.Walk([]string{k}); m != nil {
				miss(p, &Miss{At: len(path), Msg: m.Msg, Release: m.Release})
				continue
			}
			s.At([]string{k}).check(x[k], p, whole, miss)
		}
	case []any:
		if s.Kind != List {
			if whole && len(path) > 0 && s.Kind != Opaque && !(s.Kind == Scalar && s.Scalar == AnyScalar) {
				miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is %s, not a list: %s", s.describe(), never)})
			}
			return
		}
		for i, e := range x {
			s.Elem.check(e, append(path[:len(path):len(path)], strconv.Itoa(i)), whole, miss)
		}
	default:
		// A scalar of another JSON type than the field's never equals it: "1" for a
		// number, true for a string (an absence of it holds at once, a match never).
		// A string with a ${...} is filled when the step runs: its type is known then.
		if str, ok := v.(string); ok && strings.Contains(str, "${") {
			return
		}
		if whole && v != nil && len(path) > 0 && (s.Kind == Object || s.Kind == Map || s.Kind == List) {
			b, _ := json.Marshal(v)
			miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is %s: %s (%s) is none, so %s", s.describe(), b, scalarTypeOf(v), never)})
			return
		}
		if s.Kind == Scalar && s.Scalar == QuantityScalar && len(path) > 0 {
			// A quantity that does not parse equals none: the server would refuse it.
			if t := scalarTypeOf(v); t == StringScalar || t == NumberScalar {
				if _, ok := Quantity(v); !ok {
					b, _ := json.Marshal(v)
					miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is a quantity (as 500m, 0.5, 1Gi, 128974848): %s does not parse as one, so it %s", b, never)})
				}
			} else if t != AnyScalar {
				b, _ := json.Marshal(v)
				miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is a quantity: %s, %s, %s", b, t, never)})
			}
			return
		}
		if s.Kind == Scalar && s.Scalar == IntegerScalar && len(path) > 0 && scalarTypeOf(v) == NumberScalar {
			if msg, formatOnly := s.integerMiss(v); msg != "" {
				if whole && formatOnly {
					never = "the API server keeps it, and what reads the field (Istio, the kind's controller) cannot read it as one"
				}
				miss(path, &Miss{At: len(path), Value: true, Msg: msg + ": " + never})
			}
			return
		}
		if s.Kind == Scalar && s.Scalar != AnyScalar && len(path) > 0 {
			if t := scalarTypeOf(v); t != AnyScalar && t != s.Scalar {
				b, _ := json.Marshal(v)
				if whole {
					miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is %s, not %s (%s): %s", s.Scalar, b, t, never),
						BoolForString: t == BoolScalar && s.Scalar == StringScalar})
				} else {
					miss(path, &Miss{At: len(path), Value: true, Msg: fmt.Sprintf("is %s: %s, %s, %s", s.Scalar, b, t, never)})
				}
				return
			}
		}
		if str, ok := v.(string); ok && s.Kind == Scalar && len(s.Enum) > 0 && len(path) > 0 && !slices.Contains(s.Enum, str) {
			msg := fmt.Sprintf("is one of %s; %q is none of them", strings.Join(s.Enum, ", "), str)
			if m := didyoumean.Closest(str, s.Enum); m != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", m)
			}
			miss(path, &Miss{At: len(path), Value: true, Msg: msg + ": " + never, Release: true})
		}
	}
}

// describe says what a value of shape s is: "an object", "a list", "a string".
func (s *Shape) describe() string {
	switch s.Kind {
	case Object, Map:
		return "an object"
	case List:
		return "a list"
	case Scalar:
		return s.Scalar.String()
	}
	return "any value"
}

// Canonical is v, an object (decoded JSON) of shape s, with its quantities written as the API
// server returns them ("0.5" as "500m", "1024Mi" as "1Gi", 1 as "1"); v itself is not changed.
// A fake API server keeps objects so.
func (s *Shape) Canonical(v any) any {
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s.Kind == Object || s.Kind == Map {
				out[k] = s.At([]string{k}).Canonical(e)
			} else {
				out[k] = e
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if s.Kind == List {
				out[i] = s.Elem.Canonical(e)
			} else {
				out[i] = e
			}
		}
		return out
	}
	if s.Kind == Scalar && s.Scalar == QuantityScalar {
		if q, ok := Quantity(v); ok {
			return q.String()
		}
	}
	return v
}
