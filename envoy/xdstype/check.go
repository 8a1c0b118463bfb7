package xdstype

import (
	"fmt"
	"strconv"
	"strings"

	"labrun.dev/labrun/internal/didyoumean"
)

// Hole stands in a path for a part known only at run time (a ${...}): a step that holds one is
// not checked, nor is what follows it; a selection's value or name that holds one matches
// anything. It reads as what it stands for in messages.
const Hole = "${…}"

// At returns the type of the value path selects in a value of type t, checking every step
// against the types: a field the message does not have, a selection on something that is not
// a list, a condition on a field the items do not have or a value its enum does not, are
// *PathError at the step's offset, with did-you-mean. Inside an Any whose "@type" the path
// cannot know (a filter's typed_config) or free-form JSON (metadata), the rest is not checked
// and At returns nil, nil: only the run can tell.
func (t *Type) At(path string) (*Type, error) {
	p, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	return t.at(p)
}

func (t *Type) at(p Path) (*Type, error) {
	cur := t
	segs := p.Segs
	selected := "" // the name the last selection picked an item by, for its typed_config
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		name := selected
		selected = ""
		where := JoinSegs(segs[:i])
		fail := func(at int, format string, args ...any) (*Type, error) {
			return nil, &PathError{Path: p.Text, Offset: at, Msg: fmt.Sprintf(format, args...), Missing: true}
		}
		if cur == nil || cur.Kind == JSON {
			return cur, nil // not checkable from here on
		}
		if s.Kind == SegKey && strings.Contains(s.Text, Hole) {
			return nil, nil // a step named at run time
		}
		switch cur.Kind {
		case Any:
			if s.Kind == SegKey && s.Text == "@type" {
				cur = &Type{Kind: String}
				continue
			}
			if cur.Msg == nil {
				return nil, nil
			}
			cur = &Type{Kind: Message, Msg: cur.Msg}
			i--
			continue
		case Message:
			if s.Kind != SegKey && !(s.Kind == SegName && s.Quoted) {
				return fail(s.Pos, "%s is one %s, not a list: [...] selects an item of a list", describeWhere(where), cur.Msg.Short())
			}
			f := cur.Msg.Field(s.Text)
			if f == nil {
				return fail(s.Pos, "%s", noField(where, cur.Msg, s.Text))
			}
			cur = f.Type
			if cur.Kind == Any && f.Name == "typed_config" && Extensions[name] != "" {
				cur = &Type{Kind: Any, Msg: Lookup(Extensions[name])}
			}
		case List:
			switch s.Kind {
			case SegIndex:
			case SegKey:
				if _, err := strconv.Atoi(s.Text); err != nil {
					hint := ""
					if cur.Elem.Kind == Message && cur.Elem.Msg.Field(s.Text) != nil {
						hint = fmt.Sprintf("; %s is a field of each item: %s[0].%s", s.Text, JoinSegs(segs[:i]), s.Text)
					}
					return fail(s.Pos, "%s is a list of %s: select one item with [n], [\"name\"] or [field=value], not .%s%s", describeWhere(where), cur.Elem, s.Text, hint)
				}
			case SegName:
				if cur.Elem.Kind != Message || cur.Elem.Msg.Field("name") == nil {
					return fail(s.Pos, "%s is a list of %s, which have no name: select by a field, [field=value], or by index", describeWhere(where), cur.Elem)
				}
				selected = s.Text
			case SegWhere:
				if err := checkConds(p.Text, cur.Elem, s.Conds); err != nil {
					return nil, err
				}
				for _, c := range s.Conds {
					if len(c.Field) == 1 && c.Field[0] == "name" {
						selected = c.Value
					}
				}
			}
			cur = cur.Elem
		case Map:
			if s.Kind == SegWhere {
				return fail(s.Pos, "%s is a map: select a key with .key or [\"key\"]", describeWhere(where))
			}
			cur = cur.Elem
			if cur.Kind == Any && s.Kind == SegKey && !s.Quoted {
				// Istio keys typed_extension_protocol_options by the message's name, dots and all.
				for j := len(segs); j > i; j-- {
					name := joinKeys(segs[i:j])
					if m := Lookup(name); m != nil {
						cur = &Type{Kind: Any, Msg: m}
						i = j - 1
						break
					}
				}
			} else if cur.Kind == Any && Lookup(s.Text) != nil {
				cur = &Type{Kind: Any, Msg: Lookup(s.Text)}
			}
		default:
			return fail(s.Pos, "%s is %s: it has nothing to select with %s", describeWhere(where), article(cur), JoinSegs(segs[i:i+1]))
		}
	}
	return cur, nil
}

// joinKeys joins unquoted key steps with dots ("" when one is not a plain key).
func joinKeys(segs []Seg) string {
	var parts []string
	for _, s := range segs {
		if s.Kind != SegKey || s.Quoted {
			return ""
		}
		parts = append(parts, s.Text)
	}
	return strings.Join(parts, ".")
}

// checkConds checks the conditions of a selection against the items' type.
func checkConds(path string, item *Type, conds []Cond) error {
	for _, c := range conds {
		if strings.Contains(strings.Join(c.Field, "."), Hole) {
			continue
		}
		t := item
		for k, name := range c.Field {
			if t.Kind == Any && t.Msg != nil {
				t = &Type{Kind: Message, Msg: t.Msg}
			}
			if t.Kind == JSON || (t.Kind == Any && t.Msg == nil) {
				t = nil
				break
			}
			if t.Kind != Message {
				return &PathError{Path: path, Offset: c.Pos, Missing: true,
					Msg: fmt.Sprintf("%s is %s, it has no field %q", strings.Join(c.Field[:k], "."), article(t), name)}
			}
			f := t.Msg.Field(name)
			if f == nil {
				return &PathError{Path: path, Offset: c.Pos, Missing: true, Msg: noField("", t.Msg, name)}
			}
			t = f.Type
		}
		if t == nil {
			continue
		}
		if err := checkValue(t, c.Value); err != "" {
			return &PathError{Path: path, Offset: c.ValuePos, Missing: true,
				Msg: fmt.Sprintf("%s is %s: %s", strings.Join(c.Field, "."), article(t), err)}
		}
	}
	return nil
}

// checkValue says what is wrong with comparing a value of type t with text ("" when nothing).
func checkValue(t *Type, text string) string {
	if strings.Contains(text, Hole) {
		return ""
	}
	switch t.Kind {
	case Enum:
		for _, v := range t.Enum.Values {
			if v == text {
				return ""
			}
		}
		if s := didyoumean.Closest(text, t.Enum.Values); s != "" {
			return fmt.Sprintf("no value %q (did you mean %q?)", text, s)
		}
		return fmt.Sprintf("no value %q; its values: %s", text, strings.Join(t.Enum.Values, ", "))
	case Number, Int64:
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return fmt.Sprintf("%q is not a number", text)
		}
	case Bool:
		if text != "true" && text != "false" {
			return fmt.Sprintf("%q is not true or false", text)
		}
	case Message, List, Map:
		return "a condition compares a single value (a string, number, boolean or enum): select a field of it"
	}
	return ""
}

// noField says that message m (at where) has no field name, with what the user may have meant.
func noField(where string, m *Msg, name string) string {
	at := m.Short()
	if where != "" {
		at = fmt.Sprintf("%s (%s)", where, m.Short())
	}
	for _, f := range m.Fields {
		if f.JSONName == name && f.Name != name {
			return fmt.Sprintf("%s has no field %q: did you mean %q? (config_dump writes Envoy's snake_case names; %s is the camelCase of istioctl and the proto JSON default)", at, name, f.Name, name)
		}
	}
	names := m.FieldNames()
	if len(names) == 0 {
		return fmt.Sprintf("%s has no field %q: it has no fields", at, name)
	}
	if s := didyoumean.Closest(name, names); s != "" {
		return fmt.Sprintf("%s has no field %q (did you mean %q?)", at, name, s)
	}
	const show = 40
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(", … %d more", len(names)-show)
		names = names[:show]
	}
	return fmt.Sprintf("%s has no field %q; its fields: %s%s", at, name, strings.Join(names, ", "), more)
}

func describeWhere(where string) string {
	if where == "" {
		return "the value"
	}
	return where
}

// article is the type's name after "a" or "an".
func article(t *Type) string {
	s := t.String()
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
