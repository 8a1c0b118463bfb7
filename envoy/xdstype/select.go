package xdstype

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"labrun.dev/labrun/internal/didyoumean"
)

// Select returns the value path selects in v, a value of type t (nil: JSON of no known type, a
// Kubernetes object). v should be normalized (Normalize) so that conditions see defaults.
//
// With a type, a field the type has but the value does not (an unset message or wrapper) reads
// as nil, and so does everything below it: the path is right, the config has nothing there. A
// field the type does not have is an error with did-you-mean. Without a type, a missing key is
// an error that lists the keys there are. Either way a list index out of range, or a
// selection that matches no item or several, is an error that says what the list holds. Errors
// are *PathError; Missing is set when the path is well formed but leads nowhere.
func Select(v any, t *Type, path string) (any, error) {
	p, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	budget := 10000 // backtracking over dotted keys is bounded, whatever the data
	return sel(v, t, p, 0, &budget)
}

// sel resolves p.Segs[i:] from cur, of type t. When both "b" and "b.c" are keys of a map, it
// tries the single step first and falls back to the joined one, so either spelling that leads
// somewhere wins; on failure it reports the first way tried.
func sel(cur any, t *Type, p Path, i int, budget *int) (any, error) {
	if i == len(p.Segs) {
		return cur, nil
	}
	if *budget--; *budget < 0 {
		return nil, &PathError{Path: p.Text, Missing: true, Msg: "too many ways to read the dotted keys"}
	}
	s := p.Segs[i]
	where := JoinSegs(p.Segs[:i])
	fail := func(format string, args ...any) (any, error) {
		return nil, &PathError{Path: p.Text, Offset: s.Pos, Missing: true, Msg: fmt.Sprintf(format, args...)}
	}
	t = resolveAny(cur, t)
	switch c := cur.(type) {
	case map[string]any:
		if s.Kind == SegWhere || (s.Kind == SegIndex && t != nil && t.Kind == Message) {
			return fail("%s is a map, not a list: [...] with a condition or index selects an item of a list", describeAt(where))
		}
		key := s.Text
		if t != nil && t.Kind == Message {
			f := t.Msg.Field(key)
			if f == nil && key != "@type" {
				if _, ok := c[key]; !ok { // a field of an Envoy newer than the types is read as it is
					if j, next, ok := joinedKey(c, p, i); ok {
						return sel(next, nil, p, j, budget)
					}
					return fail("%s", noField(where, t.Msg, key))
				}
			}
			next, ok := c[key]
			if !ok {
				if f != nil && f.HasDefault() {
					return sel(f.Default(), f.Type, p, i+1, budget) // left out at its default
				}
				return nil, nil // unset: a message or wrapper Envoy did not write
			}
			var ft *Type
			if f != nil {
				ft = f.Type
			}
			if key == "value" && typedStructs[t.Msg.Name] {
				ft = typedStructValue(c) // its fields checked, those left out at their default
			}
			return sel(next, ft, p, i+1, budget)
		}
		var elem *Type
		if t != nil && t.Kind == Map {
			elem = t.Elem
		}
		var firstErr error
		if next, ok := c[key]; ok {
			r, err := sel(next, elem, p, i+1, budget)
			if err == nil {
				return r, nil
			}
			firstErr = err
		}
		if s.Kind == SegKey && !s.Quoted {
			for j := i + 1; j < len(p.Segs); j++ {
				joined := joinKeys(p.Segs[i : j+1])
				if joined == "" {
					break
				}
				if next, ok := c[joined]; ok {
					r, err := sel(next, elem, p, j+1, budget)
					if err == nil {
						return r, nil
					}
					if firstErr == nil {
						firstErr = err
					}
				}
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fail("%s has no key %q (keys: %s)", describeAt(where), key, quoteList(keys))
	case []any:
		var elem *Type
		if t != nil && t.Kind == List {
			elem = t.Elem
		}
		n := 0
		switch s.Kind {
		case SegKey:
			var err error
			if n, err = strconv.Atoi(s.Text); err != nil || s.Quoted {
				return fail("%s is a list of %d, %q is not an index: select one item with [n], [\"name\"] or [field=value]", describeAt(where), len(c), s.Text)
			}
		case SegIndex:
			n = s.Index
			if n < 0 {
				n += len(c)
			}
		case SegName:
			idx, err := matching(c, elem, []Cond{{Field: []string{"name"}, Value: s.Text}})
			if err != nil {
				return nil, &PathError{Path: p.Text, Offset: s.Pos, Missing: true, Msg: fmt.Sprintf("%s: %v", describeAt(where), err)}
			}
			n = idx
		case SegWhere:
			idx, err := matching(c, elem, s.Conds)
			if err != nil {
				return nil, &PathError{Path: p.Text, Offset: s.Pos, Missing: true, Msg: fmt.Sprintf("%s: %v", describeAt(where), err)}
			}
			n = idx
		}
		if n < 0 || n >= len(c) {
			return fail("%s has %d items, no index %s", describeAt(where), len(c), JoinSegs([]Seg{s}))
		}
		return sel(c[n], elem, p, i+1, budget)
	case nil:
		if t != nil {
			return nil, nil // a typed null is unset, and so is everything below it
		}
	}
	return fail("%s is %s, not a map or list; cannot take %s", describeAt(where), describeValue(cur), JoinSegs([]Seg{s}))
}

// joinedKey finds a key of c that is several unquoted steps joined with dots, starting at i:
// the index after them and the value.
func joinedKey(c map[string]any, p Path, i int) (int, any, bool) {
	for j := i + 1; j < len(p.Segs); j++ {
		joined := joinKeys(p.Segs[i : j+1])
		if joined == "" {
			break
		}
		if next, ok := c[joined]; ok {
			return j + 1, next, true
		}
	}
	return 0, nil, false
}

// resolveAny turns the type of an Any into its message when the value says which ("@type").
func resolveAny(v any, t *Type) *Type {
	if t == nil || t.Kind != Any {
		return t
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	url, _ := m["@type"].(string)
	if msg := ByTypeURL(url); msg != nil {
		return &Type{Kind: Message, Msg: msg}
	}
	if t.Msg != nil {
		return &Type{Kind: Message, Msg: t.Msg}
	}
	return nil
}

// matching returns the index of the one item of list (of elem, nil: untyped) for which every
// condition holds.
func matching(list []any, elem *Type, conds []Cond) (int, error) {
	var hits []int
	for i, it := range list {
		if holds(it, elem, conds) {
			hits = append(hits, i)
		}
	}
	what := describeConds(conds)
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return -1, fmt.Errorf("no item of %d has %s%s", len(list), what, whatThereIs(list, elem, conds))
	}
	idx := make([]string, len(hits))
	for i, h := range hits {
		idx[i] = strconv.Itoa(h)
	}
	return -1, fmt.Errorf("%d items have %s (indexes %s): add a condition ([a=x,b=y]) or select by index", len(hits), what, strings.Join(idx, ", "))
}

// holds reports whether every condition holds for item (of type t, nil: untyped).
func holds(item any, t *Type, conds []Cond) bool {
	for _, c := range conds {
		v, ok := fieldValue(item, t, c.Field)
		if !ok || !equalText(v, c.Value) {
			return false
		}
	}
	return true
}

// ReadAny is the value at names inside v, the value of an Any (a typed_config: its "@type"
// names its message), read as the expression <the Any>.<names...> reads it: a field left out
// reads as its default, an unset message or wrapper as nil, a free-form value (Struct,
// metadata) as it is, with nil for a key it lacks; a TypedStruct's value is no free-form
// value: it is read as the message its type_url names (as an Any of that "@type"). A field the message does not have is an
// error with did-you-mean (read nil, snii == nil held over an UpstreamTlsContext whose field
// is sni), and so is a field left out of a message labrun does not know (an Any whose "@type"
// is newer than APIVersion): it cannot be told from one the message does not have, unless it is
// read with ?. (then nil, as the user asks). A field
// below an unset message has no value (an error, as expr's for a field of nil), unless it is
// read with ?. (a name written "?name"), which makes the whole read nil.
func ReadAny(v any, names ...string) (any, error) {
	got, _, err := ReadAnyTyped(v, names...)
	return got, err
}

// ReadAnyTyped is ReadAny, and the type of the field read (nil when it is not known: below an
// Any of a message labrun does not know, an unset message read with ?.).
func ReadAnyTyped(v any, names ...string) (any, *Type, error) {
	return readTyped(v, &Type{Kind: Any}, "", names)
}

// ReadJSON is the value at names inside v, free-form JSON (a google.protobuf.Struct: a
// cluster's metadata.filter_metadata.istio) or a map of an Envoy config (filter_metadata
// itself: one name) that the expression writes at, read as the
// expression <at>.<names...> reads it. Such a value has no schema, so a key it lacks cannot be told from a misspelt one:
// it has no value (an error naming the keys there are, with did-you-mean), unless it is read
// with ?. (a name written "?name"), which makes the whole read nil, the user's claim that it
// may be absent. Before, it read nil: ….istio.defualt_original_port == nil held over a
// cluster that has default_original_port.
func ReadJSON(v any, at string, names ...string) (any, error) {
	got, _, err := readTyped(v, &Type{Kind: JSON}, at, names)
	return got, err
}

// readTyped is ReadAnyTyped from a value of type t, written at (for messages; "": the Any).
func readTyped(v any, t *Type, at string, names []string) (any, *Type, error) {
	url := "" // the "@type" of the innermost Any read through (or a TypedStruct's type_url)
	what := "\"@type\""
	for i, name := range names {
		name, optional := strings.CutPrefix(name, "?")
		where := readAnyPath(names[:i])
		switch {
		case at == "":
		case i == 0:
			where = at
		case strings.HasPrefix(names[0], "?"):
			where = at + where // "?.name…"
		default:
			where = at + "." + where
		}
		if v == nil {
			if optional {
				return nil, nil, nil
			}
			if where == "" {
				return nil, nil, fmt.Errorf("the Any is unset (Envoy left it out of its config dump), so its %s has no value; claim that it is unset (== nil), or read it with ?. (?.%s)", name, name)
			}
			return nil, nil, fmt.Errorf("%s is unset (Envoy left it out of its config dump), so %s has no value; claim that it is unset (%s == nil), or read it with ?. (%s?.%s)",
				where, readAnyPath(names[:i+1]), where, where, name)
		}
		m, isMap := v.(map[string]any)
		if isMap && t != nil && t.Kind == Any {
			if u, _ := m["@type"].(string); u != "" {
				url, what = u, "\"@type\""
			}
		}
		if isMap {
			t = resolveAny(v, t)
		} else if t != nil && t.Kind == Any && t.Msg != nil {
			t = &Type{Kind: Message, Msg: t.Msg}
		}
		switch {
		case !isMap && v != nil:
			return nil, nil, fmt.Errorf("%s is %s: it has no field %q", describeAt(where), describeValue(v), name)
		case t != nil && t.Kind == Message:
			f := t.Msg.Field(name)
			next, ok := m[name]
			switch {
			case ok:
			case f == nil:
				if url != "" {
					return nil, nil, fmt.Errorf("in %s: %s", inURL(what, url), noField(where, t.Msg, name))
				}
				return nil, nil, fmt.Errorf("%s", noField(where, t.Msg, name))
			case f.HasDefault():
				next = f.Default()
			}
			msg := t.Msg
			v, t = next, nil
			if f != nil {
				t = f.Type
			}
			if name == "value" && typedStructs[msg.Name] {
				// A TypedStruct's value is free-form JSON of the message its type_url names:
				// typed by it, a misspelt field errs (with did-you-mean) instead of reading
				// nil, and one left out reads its default; of a message labrun does not know,
				// a field left out has no value, as below an Any of such an "@type".
				url, _ = m["type_url"].(string)
				what = "TypedStruct's type_url"
				t = typedStructValue(m)
			}
		case t != nil && t.Kind == JSON:
			next, ok := m[name]
			if !ok && optional {
				return nil, nil, nil
			}
			if !ok {
				return nil, nil, fmt.Errorf("%s", noKey(where, m, name))
			}
			v = next // below free-form JSON, free-form JSON again (t stays)
		case t != nil && t.Kind == Map:
			next, ok := m[name]
			if !ok && optional {
				return nil, nil, nil
			}
			if !ok {
				// A map's keys are free: a misspelt one reads nil as one Envoy left out
				// (typed_per_filter_config.envoy_filters_http_fualt == nil held).
				return nil, nil, fmt.Errorf("%s", noKey(where, m, name))
			}
			v, t = next, t.Elem
		default:
			next, ok := m[name]
			if !ok && optional {
				// Read with ?.: the user takes a field left out as nil (a seed scenario's
				// `?.max_requests_per_connection ?? 0`); a typo there is theirs to see.
				return nil, nil, nil
			}
			if !ok {
				of := "it"
				if url != "" {
					of = "its " + withURL(what, url)
				}
				return nil, nil, fmt.Errorf("%s has no value: %s names a message labrun does not know (%s), so a field Envoy left out (at its default) cannot be told from one the message does not have; test that it is there first (%q in the Any)",
					readAnyPath(names[:i+1]), of, APIVersion, name)
			}
			v, t = next, nil
		}
	}
	return v, t, nil
}

// noKey says that m, free-form JSON read at where, has no key name: the keys it has, the
// closest first, and how to claim that a key is absent.
func noKey(where string, m map[string]any, name string) string {
	at := "the value"
	if where != "" {
		at = where
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	mean := ""
	if s := didyoumean.Closest(name, keys); s != "" {
		mean = fmt.Sprintf(" (did you mean %q?)", s)
	}
	has := "it has no keys"
	if len(keys) > 0 {
		has = "its keys: " + strings.Join(keys, ", ")
	}
	claim, in := "?."+name, fmt.Sprintf("%q in it", name)
	if where != "" {
		claim, in = where+"?."+name, fmt.Sprintf("%q in %s", name, where)
	}
	return fmt.Sprintf("%s has no key %q%s; %s. Its keys are free (free-form JSON, a google.protobuf.Struct, or a map of Envoy's config), so a key it lacks cannot be told from a misspelt one: to claim that it may be absent, read it with ?. (%s reads nil where it is absent) or test it with in (%s)",
		at, name, mean, has, claim, in)
}

// typedStructs are the messages whose value field is free-form JSON of the message their
// type_url names.
var typedStructs = map[string]bool{"udpa.type.v1.TypedStruct": true, "xds.type.v3.TypedStruct": true}

// typedStructValue is the type of the value of m, a TypedStruct: the message its type_url
// names, or nil when labrun does not know it.
func typedStructValue(m map[string]any) *Type {
	url, _ := m["type_url"].(string)
	if msg := ByTypeURL(url); msg != nil {
		return &Type{Kind: Message, Msg: msg}
	}
	return nil
}

// withURL says url as what names it: `"@type" X`, `TypedStruct's type_url X`.
func withURL(what, url string) string { return what + " " + url }

// inURL says where a field is read, by the url that types it: `an Any of "@type" X`, `a
// TypedStruct's value of type_url X`.
func inURL(what, url string) string {
	if what == "\"@type\"" {
		return "an Any of \"@type\" " + url
	}
	return "a TypedStruct's value of type_url " + url
}

// readAnyPath writes names (a "?name" read with ?.) as the path they read below the Any.
func readAnyPath(names []string) string {
	var b strings.Builder
	for i, n := range names {
		n, optional := strings.CutPrefix(n, "?")
		switch {
		case optional:
			b.WriteString("?.")
		case i > 0:
			b.WriteByte('.')
		}
		b.WriteString(n)
	}
	return b.String()
}

// fieldValue is the value at names inside v (of type t): a field left out reads as its
// default when t says it has one.
func fieldValue(v any, t *Type, names []string) (any, bool) {
	for _, name := range names {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		t = resolveAny(v, t)
		var f *Field
		if t != nil && t.Kind == Message {
			f = t.Msg.Field(name)
		}
		next, ok := m[name]
		switch {
		case ok:
		case f != nil && f.HasDefault():
			next = f.Default()
		default:
			return nil, false
		}
		v = next
		t = nil
		if f != nil {
			t = f.Type
		}
	}
	return v, true
}

// equalText compares a scalar with the text a condition wrote.
func equalText(v any, text string) bool {
	switch x := v.(type) {
	case string:
		return x == text
	case float64:
		f, err := strconv.ParseFloat(text, 64)
		return err == nil && f == x
	case json.Number:
		return x.String() == text
	case bool:
		return strconv.FormatBool(x) == text
	case nil:
		return text == "null"
	}
	return false
}

func describeConds(conds []Cond) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, strings.Join(c.Field, ".")+" = "+strconv.Quote(c.Value))
	}
	return strings.Join(parts, " and ")
}

// whatThereIs lists the values the items have for the first condition's field, so that a
// selection that matched nothing shows what it could have matched.
func whatThereIs(list []any, elem *Type, conds []Cond) string {
	if len(conds) == 0 || len(list) == 0 {
		return ""
	}
	var have []string
	seen := map[string]bool{}
	for _, it := range list {
		v, _ := fieldValue(it, elem, conds[0].Field)
		s := "(none)"
		switch x := v.(type) {
		case nil:
		case string:
			s = strconv.Quote(x)
		default:
			b, _ := json.Marshal(x)
			s = string(b)
		}
		if !seen[s] {
			seen[s] = true
			have = append(have, s)
		}
	}
	const show = 12
	more := ""
	if len(have) > show {
		more = fmt.Sprintf(", … %d more", len(have)-show)
		have = have[:show]
	}
	return fmt.Sprintf("; their %s: %s%s", strings.Join(conds[0].Field, "."), strings.Join(have, ", "), more)
}

func describeAt(at string) string {
	if at == "" {
		return "the top level"
	}
	return at
}

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 60 {
			x = x[:60] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64, json.Number, int, int64, uint64:
		return fmt.Sprintf("the number %v", x)
	}
	return fmt.Sprintf("a %T", v)
}

func quoteList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	const show = 30
	more := ""
	if len(keys) > show {
		more = fmt.Sprintf(", … %d more", len(keys)-show)
		keys = keys[:show]
	}
	return strings.Join(keys, ", ") + more
}
