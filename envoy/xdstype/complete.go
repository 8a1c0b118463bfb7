package xdstype

import (
	"sort"
	"strings"
)

// Complete lists what a config path written so far (written, the text before the cursor) can
// continue with, in a value of the resource kind (Resource's kinds): each candidate is the
// whole path up to and including the next step — a field of the message the path is at
// (filtered by the part of a name already written), or, at a list, a selection of an item. An
// editor offers them for a config step's path; nil when the path so far does not check.
func Complete(kind, written string) []string {
	t := Resource(kind)
	if t == nil {
		return nil
	}
	// Split at the last step boundary outside quotes and brackets: what is typed, and the
	// partial name being written.
	cut, depth, inQuote := -1, 0, false
	for i := 0; i < len(written); i++ {
		switch c := written[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case inQuote:
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				cut = i + 1
			}
		case c == '.' && depth == 0:
			cut = i
		}
	}
	if depth != 0 || inQuote {
		return nil // inside a selection: no candidates
	}
	prefix, partial := "", written
	if cut >= 0 {
		prefix, partial = written[:cut], strings.TrimPrefix(written[cut:], ".")
	}
	at := t
	if prefix != "" {
		var err error
		if at, err = t.At(prefix); err != nil || at == nil {
			return nil
		}
	}
	join := func(step string) string {
		if prefix == "" {
			return step
		}
		return prefix + "." + step
	}
	switch at.Kind {
	case Any:
		if at.Msg == nil {
			return nil
		}
		fallthrough
	case Message:
		var out []string
		for _, f := range at.Msg.Fields {
			if strings.HasPrefix(f.Name, partial) {
				out = append(out, join(f.Name))
			}
			if f.Name == partial && f.Type.Kind == List {
				out = append(out, selections(join(f.Name), f.Type)...)
			}
		}
		return out
	case List:
		if partial != "" {
			return nil
		}
		return selections(prefix, at)
	case Map:
		if at.Elem.Kind != Any {
			return nil
		}
		var out []string
		for _, name := range MessageNames() {
			if strings.HasPrefix(name, "envoy.extensions.upstreams.") && strings.HasPrefix(name, partial) && strings.Count(name, ".") == 5 {
				out = append(out, join(`"`+name+`"`))
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// selections are the ways to select an item of the list at path (of type list).
func selections(path string, list *Type) []string {
	out := []string{path + "[0]"}
	if list.Elem.Kind == Message && list.Elem.Msg.Field("name") != nil {
		out = append(out, path+"[name=")
	}
	return out
}
