package schema

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The type model of what expressions read. Each step kind declares, in its own Go file, the
// type of what a named step of the kind records (its Result method, see Recorder): every field
// with its type, its unit, one sentence of doc and the moment it exists. The expression checker
// (vet), the judge's environment, the run's record, the reports and `labrun mutate` read that
// one declaration; editors complete and explain expressions with it.

// TypeKind is the shape of a value.
type TypeKind uint8

// The shapes.
const (
	// TAny is a value whose shape is known only at run time (a get's object, a config value).
	TAny TypeKind = iota
	TNumber
	TString
	TBool
	// TMap has string keys (Key says what they are) and values of one type (Elem).
	TMap
	// TList has elements of one type (Elem).
	TList
	// TStruct has named fields, each with its own type (Fields).
	TStruct
	// TStats maps a stat name, dots included, to a number; StatSource says which names its
	// source can have.
	TStats
)

// Unit is what a number counts or measures ("" for a plain number).
type Unit string

// The units.
const (
	Plain   Unit = ""
	Count   Unit = "count"
	Millis  Unit = "ms"
	Seconds Unit = "s"
	PerSec  Unit = "1/s"
	Bytes   Unit = "bytes"
)

// When says when a field of a step's result exists on the run's timeline.
type When uint8

// The moments.
const (
	// AfterEnd: once the step has ended (a load's counts, a command's output).
	AfterEnd When = iota
	// Live: from the moment the step starts, changing while it runs (what a config step's
	// until reads after each read).
	Live
	// PerSample: once the first sample of a sampling step has been taken, replaced or grown
	// by every later sample.
	PerSample
)

func (w When) String() string {
	switch w {
	case Live:
		return "live while the step runs"
	case PerSample:
		return "after each sample"
	}
	return "after the step ends"
}

// Type is the static type of a value an expression reads.
type Type struct {
	Kind TypeKind
	// Unit is a number's unit.
	Unit Unit
	// Doc says what a value of the type is, when the type itself says more than its field
	// (a map's key: "an HTTP status code such as \"503\"").
	Doc string
	// Key is a map's key (always a string in expressions), Elem a map's value or a list's
	// element.
	Key, Elem *Type
	// Keys, for a map whose keys are known before the run (a capture pattern's named groups,
	// the steps of started.<step>), are those keys; nil when any key may appear.
	Keys []string
	// Hint, on a map's key type, says how to make a key exist (%s is the key): "name one with
	// (?P<%s>...)".
	Hint string
	// Enum, for a string, are the values it can take (outcome.<step>); nil: any.
	Enum []string
	// Known, for a string that may take any value, are the values it most often takes (an
	// event's reason: those Kubernetes writes): a literal compared with it that is close to
	// one and none is warned of as a misspelling.
	Known []string
	// Wrapper, for a config value's field, is the protobuf wrapper it is held in
	// ("UInt32Value", "BoolValue"), or "Duration" for a protobuf Duration (a message too):
	// unset, Envoy's dump leaves it out, it reads nil, and Envoy applies its own default,
	// which the dump does not give.
	Wrapper string
	// Form, for a string, is the shape of its values when it has one ("" for any): a map
	// whose keys have a form never holds a key of another (an ip:port address is no host).
	Form Form
	// Fields are a struct's fields, or a stats map's named members besides its stats (a
	// snapshot's hosts).
	Fields []*Field
	// Alias maps a name that is short for a field and key ("code503" for codes["503"]).
	Alias func(name string) (field, key string, ok bool)
	// Stats is where a stats map's names come from.
	Stats *StatSource
	// Go is the type of the value at run time (nil: JSON-like data, any).
	Go reflect.Type
	// KeyChecked, on a map of an Envoy config (filter_metadata, typed_per_filter_config), says
	// a key it lacks has no value (an error naming the keys there are) unless it is read
	// with ?.: its keys are free, so a misspelt one cannot be told from one Envoy left out.
	KeyChecked bool
	// KeyRead, on a map some of whose keys can have no value where the map has one (a load's
	// codes, of a load no request of which was answered), is the environment name of the
	// function each read of a key written in the expression is handed through, wherever the
	// map comes from: KeyRead(<the map>, <key>, <as written>) gives the key's value or errs.
	KeyRead string
	// KeyHas is, beside KeyRead, the function each look-up of a key (has(m, k), k in m) is
	// handed through: KeyHas(<the map>, <key>, <as written>) says whether the map holds the
	// key, or errs where the key has no value.
	KeyHas string
	// KeyGet is, beside KeyRead, the function each get(<the map>, <key>) is handed through:
	// KeyGet(<the map>, <key>, <as written>) gives the key's value, nil where the map has no
	// such key, or errs.
	KeyGet string
}

// Field is one named field of a struct.
type Field struct {
	Name string
	Type *Type
	// Doc is one sentence: what the field holds.
	Doc  string
	When When
	// Absent, when set, says why the step does not record the field, and how to make it
	// (reading it is an error).
	Absent string
	// Default, when set, is what the field reads as where the recorded value leaves it out
	// (a config value: Envoy's JSON omits a scalar, enum or list at its default); presence
	// (in, has, len) still sees what was recorded.
	Default any
	// OnlyIf, when set, names a boolean field of the same struct: this field has a value only
	// where that one is true (an access-log entry's code, of a line that is an access line),
	// or, written !name, only where it is false (a command's stdout, where stdoutCut is not
	// set: labrun kept all of it). Read elsewhere, it is an error saying so, not the zero
	// value that would pass a comparison with a code the line never had, nor a part of the
	// output that would pass a claim the whole breaks.
	OnlyIf string
	// OnlyIfWhy, when set, is that error's message, in the field's own terms ({field} stands
	// for the field's name): what a struct whose OnlyIf is false is, and what to read instead.
	// Without it the message says only that OnlyIf is false.
	OnlyIfWhy string
	// Read, when set, is the environment name of the function each read of this field is
	// handed through, wherever the struct comes from (a let, a list's item):
	// Read(<the struct>, <field>, <as written>) gives the field's value or errs where the
	// struct has none for it (a load's latency, of a load no request of which was answered).
	Read string
}

// NoValueError is the error of a read, while an expression runs, of what the record says has
// no value (ReadCode): the expression is neither true nor false there.
type NoValueError struct{ Msg string }

func (e *NoValueError) Error() string { return e.Msg }

// OnlyIfFunc is the environment name a read of an OnlyIf field is rewritten to:
// OnlyIfFunc(<the struct>, <OnlyIf>, <field>, <OnlyIfWhy>, <step>) is ReadOnlyIf.
const OnlyIfFunc = "__onlyIf"

// SetFunc is the environment name a config value's wrapper field is handed through where a
// comparison would hold of its nil (cb.max_retries != 3): SetFunc(<value>, <as written>,
// <wrapper>, <operator>, <comparison>) is ReadSet.
const SetFunc = "__set"

// ReadSet is v, or, where v is nil (an unset wrapper field of a config value: Envoy applies
// its own default, which its dump does not give), an error that says so: a comparison op
// (!=, not in) would hold of that nil whatever the default is; an order (<, >=) cannot be
// judged (expr's "invalid operation: <nil> < int" said nothing of why).
func ReadSet(v any, written, wrapper, op, cmp string) (any, error) {
	if v != nil {
		return v, nil
	}
	switch op {
	case "<", "<=", ">", ">=":
		return nil, fmt.Errorf("%s has no value: it is unset (Envoy left this %s out of its config dump), so Envoy applies its own default, which the dump does not give, and %s cannot be judged; claim that it is unset (%s == nil), or that it is set and %s (%s != nil && %s)",
			written, wrapper, cmp, written, cmp, written, cmp)
	}
	return nil, fmt.Errorf("%s has no value: it is unset (Envoy left this %s out of its config dump), so Envoy applies its own default, which the dump does not give, and %s would hold whatever that default is; claim that it is unset (%s == nil), or that it is set to another value (%s != nil && %s)",
		written, wrapper, op, written, written, cmp)
}

// GroupFunc is the environment name a read of a capture group from a map that may lack it
// (a logs entry's captures, of a line the pattern did not match) is rewritten to:
// GroupFunc(<the map>, <group>, <step>) is ReadGroup.
const GroupFunc = "__group"

// IsCapture says t is the map of a capture pattern's named groups (a logs step's capture and
// its entries' captures, an exec's captured).
func (t *Type) IsCapture() bool { return t != nil && t.Kind == TMap && t.Key == captureGroup }

// ReadGroup is the group called group of captures, or an error where captures does not hold
// it: an entry whose line the capture pattern did not match has no groups, and read as "",
// all(l.entries, .captures.cid != '8') held of lines that name no connection at all.
//
// A captures that is no map at all (nil: first() of an empty list) errs in expr's words for a
// field read from nil, which the judge says in the claim's terms. step is the name of the
// logs step whose entries hold captures, as the scenario writes it ("" where vet could not
// tell): the message names it where it says what to read instead.
func ReadGroup(v any, group, step string) (string, error) {
	captures, ok := v.(map[string]string)
	if !ok {
		return "", fmt.Errorf("cannot fetch %s from %v", group, v)
	}
	if v, ok := captures[group]; ok {
		return v, nil
	}
	if len(captures) == 0 {
		return "", errors.New(NameStep(fmt.Sprintf("captures.%s has no value: this entry's line did not match the capture pattern (its captures is empty), so reading it as \"\" would say nothing of the line; read it only where has(.captures, %q) holds (filter(<step>.entries, has(.captures, %q))), or go through <step>.captures, the groups of the lines that matched", group, group, group), step))
	}
	return "", fmt.Errorf("captures.%s has no value: group %s took no part in the capture pattern's match in this line (it sits in an alternative the match did not take); read it only where has(.captures, %q) holds", group, group, group)
}

// ReadOnlyIf is the field called field of v (a struct, by its expr tags, or a map), or an
// error where v's boolean field cond is not true: why ({field} replaced) if it is set (the
// field's OnlyIfWhy), else a message that says cond is false.
//
// A v that is nil (a step that recorded no result: it did not run, its command was not found,
// its timeout killed it, it is still running) has no field at all: that is an error too, in
// expr's words for a field read from nil ("cannot get stdout from <nil>", which the judge
// turns into "has no value", naming the step), not the nil that a contains, matches,
// startsWith or != would take for an output that holds nothing.
//
// step is the name of the step whose result v is part of, as the scenario writes it ("" where
// vet could not tell): a message that says what to read instead names it (NameStep).
func ReadOnlyIf(v any, cond, field, why, step string) (any, error) {
	if isNil(v) {
		return nil, fmt.Errorf("cannot get %s from <nil>", field)
	}
	name, want := cond, true
	if n, ok := strings.CutPrefix(cond, "!"); ok {
		name, want = n, false // a field a record leaves out (omitempty) is false
	}
	c, _ := readField(v, name)
	if b, _ := c.(bool); b != want {
		if why != "" {
			return nil, errors.New(NameStep(strings.ReplaceAll(why, "{field}", field), step))
		}
		return nil, fmt.Errorf("its %s is %t, so it has no %s", name, b, field)
	}
	if l, ok := v.(fieldLacker); ok {
		if err := l.LacksField(field); err != nil {
			return nil, errors.New(NameStep(err.Error(), step))
		}
	}
	f, _ := readField(v, field)
	return f, nil
}

// NameStep is msg with its <step> (a message's stand-in for the step whose result it is about,
// in what it says to read instead: filter(<step>.entries, .access)) replaced by step, the
// step's name as the scenario writes it. Where step is "" (vet could not tell which step's
// result was read), msg keeps <step>.
func NameStep(msg, step string) string {
	if step == "" {
		return msg
	}
	return strings.ReplaceAll(msg, "<step>", step)
}

// fieldLacker is a struct some of whose fields may have no value where its OnlyIf holds (a
// logs entry's cluster, of an access line whose format does not give it): LacksField is the
// error of reading field, or nil.
type fieldLacker interface{ LacksField(field string) error }

// isNil says v is nil, or a nil pointer or map.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// readField is the field called name of v: a map's key, or a struct's field whose expr tag
// is name.
func readField(v any, name string) (any, bool) {
	if m, ok := v.(map[string]any); ok {
		f, ok := m[name]
		return f, ok
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil, false
	}
	rt := rv.Type()
	for i := range rt.NumField() {
		if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("expr"), ","); tag == name {
			return rv.Field(i).Interface(), true
		}
	}
	return nil, false
}

// StatSource is where a stats map's names come from.
type StatSource struct {
	// ID identifies the source: snapshots of one ID form the pairs a delta compares.
	ID string
	// What names the source for messages ("local backend a").
	What string
	// Catalogue is the names the source can have (nil: not known before the run).
	Catalogue *Catalogue
	// Histograms says the snapshot records histogram quantiles (<histogram>.p99).
	Histograms bool
	// Deltas says the map holds the differences of counters between two snapshots (delta):
	// a gauge or a histogram has none.
	Deltas bool
}

// The types of plain values. They are shared: never change one, derive a new one.
var (
	AnyType    = &Type{Kind: TAny}
	NumberType = &Type{Kind: TNumber, Go: reflect.TypeFor[float64]()}
	StringType = &Type{Kind: TString, Go: reflect.TypeFor[string]()}
	BoolType   = &Type{Kind: TBool, Go: reflect.TypeFor[bool]()}
)

// Num is a number of unit u.
func Num(u Unit) *Type { return &Type{Kind: TNumber, Unit: u, Go: NumberType.Go} }

// Str is a string described by doc.
func Str(doc string) *Type { return &Type{Kind: TString, Doc: doc, Go: StringType.Go} }

// Form is the shape of a string's values.
type Form string

// The forms.
const (
	FormStatus  Form = "HTTP status code"      // "503"; "-1" a socket error or a timeout
	FormAddress Form = "ip:port address"       // "127.0.0.2:8080", "[::1]:80"
	FormHost    Form = "host (without a port)" // "127.0.0.2"
	FormURL     Form = "URL"                   // "http://127.0.0.2:8080"
	// FormLogStatus is an access log's response code: "503", or "0" when no response began.
	FormLogStatus Form = "access-log response code"
	// FormResponseFlag is an Envoy response flag as access logs write them: "UF", "URX",
	// "UAEX" (2 to 5 capitals), or "-" for none.
	FormResponseFlag Form = "Envoy response flag"
	// FormDuration is a protobuf Duration as Envoy's config dump writes it: seconds, with 3, 6
	// or 9 decimals when not whole ("10s", "0.500s", "1.000000001s").
	FormDuration Form = "protobuf Duration"
	// FormHealthFlags is a host's health_flags as Envoy's /clusters writes them: "healthy",
	// or each flag set after a slash ("/failed_outlier_check", "/failed_active_hc/pending_active_hc").
	FormHealthFlags Form = "Envoy health_flags value"
	// FormUpstreamHost is an access log's upstream host: an ip:port address, or "" where the
	// line has "-" (no upstream host was picked).
	FormUpstreamHost Form = "upstream host address"
	// FormKindName is an object named by its kind, capitalised as Kubernetes writes it, and
	// name: "Deployment/backend".
	FormKindName Form = "Kind/name"
	// FormMethod, FormPath and FormProtocol are an access log's request method (capitals:
	// "GET"), path ("/echo", "*") and protocol ("HTTP/1.1"), or "" where the line has "-".
	FormMethod   Form = "HTTP method as Envoy logs it"
	FormPath     Form = "request path"
	FormProtocol Form = "HTTP protocol as Envoy logs it"
	// FormLogFormat is the access-log format a logs entry's line was read in: "istio",
	// "envoy" or "json", or "" of a line that is not an access line.
	FormLogFormat Form = "access-log format"
)

// healthFlags is FormHealthFlags' text.
var healthFlags = regexp.MustCompile(`^(?:healthy|(?:/[a-z_]+)+)$`)

// HealthFlagNames are Envoy's host health flags (Host::HealthFlag), in the order /clusters
// prints them after slashes: a health_flags value is "healthy" or some of them.
var HealthFlagNames = []string{
	"failed_active_hc", "failed_outlier_check", "failed_eds_health", "degraded_active_hc",
	"degraded_eds_health", "pending_dynamic_removal", "pending_active_hc",
	"excluded_via_immediate_hc_fail", "active_hc_timeout", "eds_status_draining",
}

// CanContain reports whether a value of the form can contain s (the contains operator); it
// is false only where the form's values are known well enough to say: a health_flags value
// ("healthy", or Envoy's flags after slashes) holds no misspelt flag.
func (f Form) CanContain(s string) bool {
	if f != FormHealthFlags || s == "" {
		return true
	}
	anyHas := func(part string, has func(flag, part string) bool) bool {
		for _, fl := range HealthFlagNames {
			if has(fl, part) {
				return true
			}
		}
		return false
	}
	parts := strings.Split(s, "/")
	if len(parts) == 1 {
		return strings.Contains("healthy", s) || anyHas(s, strings.Contains)
	}
	for i, p := range parts {
		switch {
		case p == "":
		case i == 0 && !anyHas(p, strings.HasSuffix),
			i == len(parts)-1 && !anyHas(p, strings.HasPrefix),
			i > 0 && i < len(parts)-1 && !slices.Contains(HealthFlagNames, p):
			return false
		}
	}
	return true
}

// protoDuration is FormDuration's text.
var protoDuration = regexp.MustCompile(`^-?[0-9]+(?:\.(?:[0-9]{3}|[0-9]{6}|[0-9]{9}))?s$`)

// Holds reports whether s can be a value of the form.
func (f Form) Holds(s string) bool {
	switch f {
	case FormStatus:
		if s == "-1" {
			return true
		}
		n, err := strconv.Atoi(s)
		return err == nil && len(s) == 3 && n >= 100 && n <= 599
	case FormLogStatus:
		n, err := strconv.Atoi(s)
		return s == "0" || (err == nil && len(s) == 3 && n >= 100 && n <= 599)
	case FormResponseFlag:
		if s == "-" {
			return true
		}
		if len(s) < 2 || len(s) > 5 {
			return false
		}
		for _, c := range s {
			if c < 'A' || c > 'Z' {
				return false
			}
		}
		return true
	case FormDuration:
		return protoDuration.MatchString(s)
	case FormHealthFlags:
		if !healthFlags.MatchString(s) {
			return false
		}
		for _, fl := range strings.Split(s, "/")[1:] {
			if !slices.Contains(HealthFlagNames, fl) {
				return false // a misspelt flag: Envoy writes none like it
			}
		}
		return true
	case FormMethod:
		return s == "" || strings.ToUpper(s) == s && !strings.ContainsAny(s, " /")
	case FormPath:
		return s == "" || strings.HasPrefix(s, "/") || s == "*"
	case FormProtocol:
		return s == "" || s == "HTTP/1.0" || s == "HTTP/1.1" || s == "HTTP/2" || s == "HTTP/3"
	case FormLogFormat:
		return s == "" || s == "istio" || s == "envoy" || s == "json"
	case FormKindName:
		kind, name, ok := strings.Cut(s, "/")
		return ok && kind != "" && name != "" && kind[0] >= 'A' && kind[0] <= 'Z'
	case FormUpstreamHost:
		return s == "" || FormAddress.Holds(s)
	case FormAddress:
		_, port, err := net.SplitHostPort(s)
		if err != nil {
			return false
		}
		n, err := strconv.Atoi(port)
		return err == nil && n >= 0 && n <= 65535
	}
	return true
}

// Meets reports whether a value of form f can be a value of form g: the same form, or a
// load's status codes and an access log's (both "503").
func (f Form) Meets(g Form) bool {
	statuses := map[Form]bool{FormStatus: true, FormLogStatus: true}
	return f == g || (statuses[f] && statuses[g])
}

// StrForm is a string of a form.
func StrForm(doc string, f Form) *Type {
	t := Str(doc)
	t.Form = f
	return t
}

// MapOf is a map from key to elem, stored at run time as a Go map of goType.
func MapOf(key, elem *Type) *Type {
	t := &Type{Kind: TMap, Key: key, Elem: elem}
	if elem.Go != nil {
		t.Go = reflect.MapOf(reflect.TypeFor[string](), elem.Go)
	}
	return t
}

// ListOf is a list of elem.
func ListOf(elem *Type) *Type {
	t := &Type{Kind: TList, Elem: elem}
	if elem.Go != nil {
		t.Go = reflect.SliceOf(elem.Go)
	}
	return t
}

// StructOf is a struct with fields, stored at run time as goType's value (nil: a
// map[string]any with those keys).
func StructOf(goType reflect.Type, fields ...*Field) *Type {
	return &Type{Kind: TStruct, Fields: fields, Go: goType}
}

// F is a field that exists once the step has ended.
func F(name string, t *Type, doc string) *Field { return &Field{Name: name, Type: t, Doc: doc} }

// StatsOf is a stats map of src.
func StatsOf(src *StatSource) *Type {
	return &Type{Kind: TStats, Stats: src, Go: reflect.TypeFor[Stats]()}
}

// Field returns the struct's (or stats map's) field called name.
func (t *Type) Field(name string) *Field {
	if t == nil {
		return nil
	}
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FieldNames lists the names of the type's fields in their order.
func (t *Type) FieldNames() []string {
	out := make([]string, 0, len(t.Fields))
	for _, f := range t.Fields {
		out = append(out, f.Name)
	}
	return out
}

// With returns a copy of t whose fields are fn applied to each (a field replaced, e.g. a
// capture's groups filled in).
func (t *Type) With(fn func(*Field) *Field) *Type {
	c := *t
	c.Fields = make([]*Field, 0, len(t.Fields))
	for _, f := range t.Fields {
		c.Fields = append(c.Fields, fn(f))
	}
	return &c
}

// Every returns a copy of t with every field's moment set to w.
func (t *Type) Every(w When) *Type {
	return t.With(func(f *Field) *Field { g := *f; g.When = w; return &g })
}

// WithKeys is a map type with its keys known.
func (t *Type) WithKeys(keys []string) *Type {
	c := *t
	c.Keys = keys
	return &c
}

// Zero is a value of the type's Go type, for compiling expressions against it (nil for Any).
func (t *Type) Zero() any {
	switch {
	case t == nil || t.Kind == TAny:
		return nil
	case t.Go != nil:
		return reflect.Zero(t.Go).Interface()
	case t.Kind == TStruct, t.Kind == TMap:
		return map[string]any{}
	case t.Kind == TList:
		return []any{}
	}
	return nil
}

// String describes the type in a few words, as messages and editors show it: "number (ms)",
// "map of string to number (count)", "struct {requests, codes, …}".
func (t *Type) String() string {
	if t == nil {
		return "unknown"
	}
	switch t.Kind {
	case TNumber:
		if t.Unit != Plain {
			return "number (" + string(t.Unit) + ")"
		}
		return "number"
	case TString:
		return "string"
	case TBool:
		return "bool"
	case TMap:
		return "map of string to " + t.Elem.String()
	case TList:
		return "list of " + t.Elem.String()
	case TStruct:
		names := t.FieldNames()
		if len(names) > 4 {
			names = append(names[:4], "…")
		}
		return "struct {" + strings.Join(names, ", ") + "}"
	case TStats:
		if t.Stats != nil && t.Stats.What != "" {
			return "stats of " + t.Stats.What
		}
		return "stats"
	}
	return "any"
}

// Word is the type's kind as a noun phrase with its article ("a number", "a map"), for
// messages.
func (t *Type) Word() string {
	switch t.Kind {
	case TNumber:
		return "a number"
	case TString:
		return "a string"
	case TBool:
		return "a bool"
	case TMap:
		return "a map"
	case TList:
		return "a list"
	case TStruct:
		return "a struct"
	case TStats:
		return "a map of stats"
	}
	return "a value"
}

// Describe lists the type's fields, one per line, with their types and docs: what `labrun
// help steps` and the docs show of a kind's result.
func (t *Type) Describe() string {
	var b strings.Builder
	t.describe(&b, "", 0)
	return strings.TrimRight(b.String(), "\n")
}

func (t *Type) describe(b *strings.Builder, prefix string, depth int) {
	for _, f := range t.Fields {
		fmt.Fprintf(b, "%s%s%s: %s", strings.Repeat("  ", depth), prefix, f.Name, f.Type)
		if f.When != AfterEnd {
			fmt.Fprintf(b, " [%s]", f.When)
		}
		if f.Doc != "" {
			b.WriteString(" — " + f.Doc)
		}
		b.WriteString("\n")
		if depth < 2 && f.Type.Kind == TList && f.Type.Elem.Kind == TStruct && f.Type.Elem.Fields != nil {
			if own, same := t.ownFields(f.Type.Elem); same {
				// A load's pods: each item has the load's own fields again; said once.
				fmt.Fprintf(b, "%s%s%s[i]: the fields above, of one item\n", strings.Repeat("  ", depth+1), prefix, f.Name)
				(&Type{Kind: TStruct, Fields: own}).describe(b, f.Name+"[i].", depth+1)
				continue
			}
			f.Type.Elem.describe(b, f.Name+"[i].", depth+1)
		}
	}
}

// ownFields are the fields of elem that t does not have by name; same says elem has every
// field of t (an item of a list that repeats its parent's fields: a load's pods).
func (t *Type) ownFields(elem *Type) (own []*Field, same bool) {
	has := map[string]bool{}
	for _, f := range elem.Fields {
		has[f.Name] = true
	}
	for _, f := range t.Fields {
		if !has[f.Name] {
			return nil, false
		}
	}
	mine := map[string]bool{}
	for _, f := range t.Fields {
		mine[f.Name] = true
	}
	for _, f := range elem.Fields {
		if !mine[f.Name] {
			own = append(own, f)
		}
	}
	return own, true
}

// TypeOfValue is the type of a JSON-like value (a var's): numbers, strings, bools, lists
// typed by their first element, maps as structs of their keys.
func TypeOfValue(v any) *Type {
	switch x := v.(type) {
	case float64, int, int64:
		return NumberType
	case string:
		return StringType
	case bool:
		return BoolType
	case []any:
		if len(x) == 0 {
			return &Type{Kind: TList, Elem: AnyType}
		}
		return &Type{Kind: TList, Elem: TypeOfValue(x[0])}
	case map[string]any:
		t := &Type{Kind: TStruct}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Fields = append(t.Fields, F(k, TypeOfValue(x[k]), ""))
		}
		return t
	}
	return AnyType
}
