// Package xdstype knows the types of Envoy's xDS API, so that labrun reads a config dump the way
// Envoy does: a field Envoy's JSON leaves out reads as its default (0, "", false, an enum's
// first value by name, an empty list), 64-bit integers as numbers, and a path into a cluster,
// listener, route configuration or endpoint assignment is checked against the type — at vet
// when it is written out, at run time when it holds ${...} — with did-you-mean for a misspelled
// field.
//
// The types are the descriptors of go-control-plane's protos (APIVersion), embedded as a
// FileDescriptorSet (envoy.binpb, written by ./gen) and indexed on first use: labrun links no
// generated Go package of go-control-plane (BENCHMARKS.md measures both ways).
//
// This package is the one place that answers "what fields does this path have, with what
// types": the config step's check and run, and editors' completion, ask it.
package xdstype

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

//go:embed envoy.binpb
var descriptorSet []byte

// Kind is the shape of a value in a config dump's JSON.
type Kind uint8

// The kinds.
const (
	// Message is a JSON object with the fields of a proto message.
	Message Kind = iota
	// List is a repeated field: a JSON array of Elem.
	List
	// Map is a map field: a JSON object whose values are Elem.
	Map
	// Number is a 32-bit integer, a float or a double: a JSON number.
	Number
	// Int64 is a 64-bit integer, which proto JSON writes as a string; it reads as a number.
	Int64
	// String, Bytes (base64) and Bool are the JSON scalars.
	String
	Bytes
	Bool
	// Enum is written by its value's name.
	Enum
	// Any is a google.protobuf.Any: an object whose "@type" names the message of its other keys.
	Any
	// JSON is free-form JSON (google.protobuf.Struct, Value, ListValue): no fields to check.
	JSON
	// Duration ("0.500s"), Timestamp and FieldMask are strings in proto JSON.
	Duration
	Timestamp
	FieldMask
)

// Type is the type of a value at some place in a config dump.
type Type struct {
	Kind Kind
	// Msg is a Message's (or an Any's, when known) message.
	Msg *Msg
	// Enum is an Enum's values.
	Enum *EnumType
	// Elem is a List's element or a Map's value.
	Elem *Type
	// Wrapper is the google.protobuf wrapper (UInt32Value, BoolValue, …) a scalar is held in:
	// absent means unset (Envoy's default applies, which the type does not know), not zero.
	Wrapper string
}

// Msg is a proto message: its fields, in the order the proto declares them.
type Msg struct {
	// Name is the full name, e.g. "envoy.config.cluster.v3.Cluster".
	Name   string
	Fields []*Field
	byName map[string]*Field
}

// Field is one field of a message.
type Field struct {
	// Name is the proto name, which Envoy's config_dump uses (snake_case).
	Name string
	// JSONName is the lowerCamelCase name istioctl and protojson's default print.
	JSONName string
	Type     *Type
	// Oneof is the oneof the field belongs to ("" for none): unset, none of its fields is there.
	Oneof string
	// Optional is a proto3 optional scalar: absent means unset.
	Optional   bool
	Deprecated bool
}

// EnumType is a proto enum.
type EnumType struct {
	Name string
	// Values are the value names; Values[0] is the one numbered 0, the default.
	Values []string
	byNum  map[int32]string
}

// Field returns m's field called name (its proto name), or nil.
func (m *Msg) Field(name string) *Field {
	if m == nil {
		return nil
	}
	return m.byName[name]
}

// FieldNames lists m's field names in declaration order.
func (m *Msg) FieldNames() []string {
	out := make([]string, len(m.Fields))
	for i, f := range m.Fields {
		out[i] = f.Name
	}
	return out
}

// Short is the message's name without its package ("Cluster").
func (m *Msg) Short() string { return m.Name[strings.LastIndexByte(m.Name, '.')+1:] }

// HasDefault reports whether a field that Envoy's JSON leaves out reads as a default value:
// scalars, enums and lists (and maps) do, deprecated ones too (Envoy still reads them, and
// istiod still writes some: respect_dns_ttl); a message, a wrapper, a oneof's member and a
// proto3 optional do not (they are unset).
func (f *Field) HasDefault() bool {
	if f.Oneof != "" || f.Optional {
		return false
	}
	switch f.Type.Kind {
	case Message, Any, JSON, Duration, Timestamp, FieldMask:
		return false
	}
	return f.Type.Wrapper == ""
}

// Default is the value a field Envoy's JSON leaves out reads as (nil when it has none).
func (f *Field) Default() any {
	if !f.HasDefault() {
		return nil
	}
	switch f.Type.Kind {
	case List:
		return []any{}
	case Map:
		return map[string]any{}
	case Number, Int64:
		return 0.0
	case String, Bytes:
		return ""
	case Bool:
		return false
	case Enum:
		if len(f.Type.Enum.Values) > 0 {
			return f.Type.Enum.Values[0]
		}
	}
	return nil
}

// String names the type as a user reads it: "Cluster", "list of LocalityLbEndpoints", "number
// (UInt32Value)", "enum LbPolicy".
func (t *Type) String() string {
	if t == nil {
		return "unknown"
	}
	w := ""
	if t.Wrapper != "" {
		w = " (" + t.Wrapper + ", unset when absent)"
	}
	switch t.Kind {
	case Message:
		return t.Msg.Short()
	case List:
		return "list of " + t.Elem.String()
	case Map:
		return "map of " + t.Elem.String()
	case Number:
		return "number" + w
	case Int64:
		return "number (64-bit)" + w
	case String:
		return "string" + w
	case Bytes:
		return "bytes (base64)" + w
	case Bool:
		return "boolean" + w
	case Enum:
		return "enum " + t.Enum.Name[strings.LastIndexByte(t.Enum.Name, '.')+1:]
	case Any:
		if t.Msg != nil {
			return t.Msg.Short() + " (in an Any)"
		}
		return "Any (its \"@type\" says what it holds)"
	case JSON:
		return "free-form JSON (google.protobuf.Struct)"
	case Duration:
		return "duration (\"0.500s\")"
	case Timestamp:
		return "timestamp"
	case FieldMask:
		return "field mask"
	}
	return "unknown"
}

// Leaf reports whether a value of the type has no fields or items to select.
func (t *Type) Leaf() bool {
	switch t.Kind {
	case Message, List, Map, Any, JSON:
		return false
	}
	return true
}

// The registry, built from the embedded descriptors on first use.
var (
	loadOnce sync.Once
	messages map[string]*Msg
	enumsBy  map[string]*EnumType
	loadErr  error
)

func load() { messages, enumsBy, loadErr = build() }

// build indexes the embedded descriptors: every message and enum by full name, each field's
// type resolved.
func build() (map[string]*Msg, map[string]*EnumType, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorSet, &set); err != nil {
		return nil, nil, fmt.Errorf("envoy API descriptors: %w", err)
	}
	messages := map[string]*Msg{}
	enumsBy := map[string]*EnumType{}
	type pending struct {
		f     *Field
		proto *descriptorpb.FieldDescriptorProto
		msg   *descriptorpb.DescriptorProto
	}
	var fields []pending
	mapEntries := map[string]*descriptorpb.DescriptorProto{}
	addEnum := func(prefix string, e *descriptorpb.EnumDescriptorProto) {
		et := &EnumType{Name: prefix + e.GetName(), byNum: map[int32]string{}}
		zero := ""
		for _, v := range e.Value {
			if v.GetNumber() == 0 && zero == "" {
				zero = v.GetName()
			} else {
				et.Values = append(et.Values, v.GetName())
			}
			if _, dup := et.byNum[v.GetNumber()]; !dup {
				et.byNum[v.GetNumber()] = v.GetName()
			}
		}
		et.Values = append([]string{zero}, et.Values...)
		enumsBy[et.Name] = et
	}
	var addMsg func(prefix string, d *descriptorpb.DescriptorProto)
	addMsg = func(prefix string, d *descriptorpb.DescriptorProto) {
		name := prefix + d.GetName()
		if d.GetOptions().GetMapEntry() {
			mapEntries[name] = d
		}
		m := &Msg{Name: name, byName: map[string]*Field{}}
		messages[name] = m
		for _, fp := range d.Field {
			f := &Field{Name: fp.GetName(), JSONName: fp.GetJsonName(), Optional: fp.GetProto3Optional(),
				Deprecated: fp.GetOptions().GetDeprecated()}
			if fp.OneofIndex != nil && !fp.GetProto3Optional() {
				f.Oneof = d.OneofDecl[fp.GetOneofIndex()].GetName()
			}
			m.Fields = append(m.Fields, f)
			m.byName[f.Name] = f
			fields = append(fields, pending{f, fp, d})
		}
		for _, n := range d.NestedType {
			addMsg(name+".", n)
		}
		for _, e := range d.EnumType {
			addEnum(name+".", e)
		}
	}
	for _, fd := range set.File {
		prefix := ""
		if fd.GetPackage() != "" {
			prefix = fd.GetPackage() + "."
		}
		for _, d := range fd.MessageType {
			addMsg(prefix, d)
		}
		for _, e := range fd.EnumType {
			addEnum(prefix, e)
		}
	}
	typeOf := func(fp *descriptorpb.FieldDescriptorProto) *Type {
		ref := strings.TrimPrefix(fp.GetTypeName(), ".")
		switch fp.GetType() {
		case descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, descriptorpb.FieldDescriptorProto_TYPE_GROUP:
			return messageType(messages, ref)
		case descriptorpb.FieldDescriptorProto_TYPE_ENUM:
			return &Type{Kind: Enum, Enum: enumsBy[ref]}
		}
		return &Type{Kind: scalarKind(fp.GetType())}
	}
	for _, p := range fields {
		t := typeOf(p.proto)
		if entry, ok := mapEntries[strings.TrimPrefix(p.proto.GetTypeName(), ".")]; ok && p.proto.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED {
			t = &Type{Kind: Map, Elem: typeOf(entry.Field[1])}
		} else if p.proto.GetLabel() == descriptorpb.FieldDescriptorProto_LABEL_REPEATED {
			t = &Type{Kind: List, Elem: t}
		}
		p.f.Type = t
	}
	return messages, enumsBy, nil
}

func scalarKind(t descriptorpb.FieldDescriptorProto_Type) Kind {
	switch t {
	case descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT64,
		descriptorpb.FieldDescriptorProto_TYPE_SINT64, descriptorpb.FieldDescriptorProto_TYPE_FIXED64,
		descriptorpb.FieldDescriptorProto_TYPE_SFIXED64:
		return Int64
	case descriptorpb.FieldDescriptorProto_TYPE_STRING:
		return String
	case descriptorpb.FieldDescriptorProto_TYPE_BYTES:
		return Bytes
	case descriptorpb.FieldDescriptorProto_TYPE_BOOL:
		return Bool
	}
	return Number
}

// wrappers maps each google.protobuf wrapper to the kind it holds.
var wrappers = map[string]Kind{
	"google.protobuf.DoubleValue": Number, "google.protobuf.FloatValue": Number,
	"google.protobuf.Int32Value": Number, "google.protobuf.UInt32Value": Number,
	"google.protobuf.Int64Value": Int64, "google.protobuf.UInt64Value": Int64,
	"google.protobuf.BoolValue": Bool, "google.protobuf.StringValue": String,
	"google.protobuf.BytesValue": Bytes,
}

// messageType is the type of a value of the message called name, with the well-known types'
// own JSON forms.
func messageType(messages map[string]*Msg, name string) *Type {
	if k, ok := wrappers[name]; ok {
		return &Type{Kind: k, Wrapper: name[len("google.protobuf."):]}
	}
	switch name {
	case "google.protobuf.Any":
		return &Type{Kind: Any}
	case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue":
		return &Type{Kind: JSON}
	case "google.protobuf.Duration":
		return &Type{Kind: Duration}
	case "google.protobuf.Timestamp":
		return &Type{Kind: Timestamp}
	case "google.protobuf.FieldMask":
		return &Type{Kind: FieldMask}
	}
	return &Type{Kind: Message, Msg: messages[name]}
}

// Lookup returns the message called name ("envoy.config.cluster.v3.Cluster"), or nil.
func Lookup(name string) *Msg {
	loadOnce.Do(load)
	return messages[name]
}

// ByTypeURL returns the message an Any's "@type" names
// ("type.googleapis.com/envoy.config.cluster.v3.Cluster"), or nil when labrun does not know it.
func ByTypeURL(url string) *Msg {
	return Lookup(url[strings.LastIndexByte(url, '/')+1:])
}

// Err reports whether the embedded descriptors could not be read (a broken build).
func Err() error {
	loadOnce.Do(load)
	return loadErr
}

// The resources a config step reads, by the step's field.
var resources = map[string]string{
	"cluster":   "envoy.config.cluster.v3.Cluster",
	"listener":  "envoy.config.listener.v3.Listener",
	"route":     "envoy.config.route.v3.RouteConfiguration",
	"endpoints": "envoy.config.endpoint.v3.ClusterLoadAssignment",
	"dump":      "envoy.admin.v3.ConfigDump",
}

// Resource is the type of what a config step reads: "cluster", "listener", "route",
// "endpoints", or "dump" (the whole config_dump). Nil for anything else.
func Resource(kind string) *Type {
	name, ok := resources[kind]
	if !ok {
		return nil
	}
	loadOnce.Do(load)
	if messages[name] == nil {
		return nil
	}
	return &Type{Kind: Message, Msg: messages[name]}
}

// MessageNames lists every message labrun knows, sorted (for completion and tests).
func MessageNames() []string {
	loadOnce.Do(load)
	out := make([]string, 0, len(messages))
	for n := range messages {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
