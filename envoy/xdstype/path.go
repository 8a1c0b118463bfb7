package xdstype

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A path selects a value inside JSON-like data (a config dump's resource, a Kubernetes object):
//
//	path     = [ step ] { "." step | "[" select "]" }
//	step     = name | quoted                 a field or map key; on a list, a number is an index
//	name     = any characters but . [ ] and "
//	quoted   = '"' { any character, \" for a quote } '"'    a key that holds dots
//	select   = integer                       a list's item by index (-1 is the last)
//	         | quoted | bare                 a list's item whose name is that; a map's key
//	         | cond { "," cond }             a list's one item for which every cond holds
//	cond     = field { "." field } "=" value  the item's field (a field of a field) equals value
//	value    = quoted | bare                 text, a number, true or false, an enum's name
//
// Examples: circuit_breakers.thresholds[0].max_connections;
// virtual_hosts["backend.conn-lab.svc.cluster.local:8080"].routes[0].route.retry_policy;
// endpoints[locality.zone=zone-b].lb_endpoints; filter_chains[name=virtualOutbound-catchall-tcp];
// typed_extension_protocol_options."envoy.extensions.upstreams.http.v3.HttpProtocolOptions" (the
// quotes are optional: unquoted, dotted steps are joined back when no single one is a key).
// A selection must match exactly one item: none or several is an error that says which exist.

// SegKind is what a path step does.
type SegKind uint8

// The steps of a path.
const (
	// SegKey is a field or map key (on a list, a number written as a step is an index).
	SegKey SegKind = iota
	// SegIndex is [n].
	SegIndex
	// SegName is ["x"] or [x]: a list's item named x, a map's key x.
	SegName
	// SegWhere is [field=value,...]: a list's one item where every condition holds.
	SegWhere
)

// Seg is one step of a path.
type Seg struct {
	Kind SegKind
	// Text is a key's or name's text.
	Text string
	// Quoted says the key was written in quotes (never joined with the next steps).
	Quoted bool
	Index  int
	Conds  []Cond
	// Pos and End are the byte offsets of the step in the path (End exclusive).
	Pos, End int
}

// Cond is field=value in a selection.
type Cond struct {
	Field []string
	Value string
	// Pos is the offset of the field in the path, ValuePos of the value.
	Pos, ValuePos int
}

// Path is a parsed path.
type Path struct {
	Text string
	Segs []Seg
}

// PathError is a problem with a path, at a byte offset of it.
type PathError struct {
	Path   string
	Offset int
	Msg    string
	// Missing says the path is well formed but leads nowhere in the value or type.
	Missing bool
}

func (e *PathError) Error() string { return e.Msg }

// ParsePath parses a path; the empty path selects the value itself.
func ParsePath(path string) (Path, error) {
	p := Path{Text: path}
	bad := func(at int, format string, args ...any) (Path, error) {
		return Path{}, &PathError{Path: path, Offset: at, Msg: "bad path: " + fmt.Sprintf(format, args...)}
	}
	i := 0
	for i < len(path) {
		start := i
		switch c := path[i]; {
		case c == '"':
			text, n, ok := unquote(path[i:])
			if !ok {
				return bad(i, "unterminated quote")
			}
			i += n
			p.Segs = append(p.Segs, Seg{Kind: SegKey, Text: text, Quoted: true, Pos: start, End: i})
		case c == '[':
			j := closing(path, i)
			if j < 0 {
				return bad(i, "unterminated [")
			}
			seg, err := parseSelect(path, i+1, j)
			if err != nil {
				return Path{}, err
			}
			seg.Pos, seg.End = start, j+1
			p.Segs = append(p.Segs, seg)
			i = j + 1
		case c == ']':
			return bad(i, "']' without '['")
		default:
			j := i
			for j < len(path) && !strings.ContainsRune(".[]\"", rune(path[j])) {
				j++
			}
			if j == i {
				return bad(i, "empty segment at %d", i)
			}
			p.Segs = append(p.Segs, Seg{Kind: SegKey, Text: path[i:j], Pos: i, End: j})
			i = j
		}
		if i < len(path) {
			switch path[i] {
			case '.':
				i++
				if i == len(path) {
					return bad(i-1, "ends with '.'")
				}
				if path[i] == '.' || path[i] == '[' {
					return bad(i, "empty segment at %d", i)
				}
			case '[':
			default:
				return bad(i, "unexpected %q at %d", path[i], i)
			}
		}
	}
	return p, nil
}

// unquote reads a quoted string at the start of s: its text, the bytes it took, and whether it
// was terminated. Only \" and \\ are escapes; other backslashes stand for themselves.
func unquote(s string) (string, int, bool) {
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
				j++
			}
		case '"':
			return b.String(), j + 1, true
		}
		b.WriteByte(s[j])
	}
	return "", 0, false
}

// closing is the offset of the ']' that closes the '[' at i, skipping quoted text; -1 if none.
func closing(path string, i int) int {
	for j := i + 1; j < len(path); j++ {
		switch path[j] {
		case '"':
			_, n, ok := unquote(path[j:])
			if !ok {
				return -1
			}
			j += n - 1
		case ']':
			return j
		}
	}
	return -1
}

// parseSelect parses the inside of [...], path[from:to].
func parseSelect(path string, from, to int) (Seg, error) {
	inner := path[from:to]
	bad := func(at int, format string, args ...any) (Seg, error) {
		return Seg{}, &PathError{Path: path, Offset: at, Msg: "bad path: " + fmt.Sprintf(format, args...)}
	}
	trimmed := strings.TrimSpace(inner)
	if trimmed == "" {
		return bad(from, "empty []: write an index [0], a name [\"x\"] or a condition [field=value]")
	}
	if n, err := strconv.Atoi(trimmed); err == nil {
		return Seg{Kind: SegIndex, Index: n, Text: trimmed}, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return bad(from, "index %s is out of range: no list is that long", trimmed)
	}
	if trimmed[0] == '"' {
		text, n, ok := unquote(trimmed)
		if ok && strings.TrimSpace(trimmed[n:]) == "" {
			return Seg{Kind: SegName, Text: text, Quoted: true}, nil
		}
	}
	if !hasUnquoted(inner, '=') {
		return Seg{Kind: SegName, Text: trimmed}, nil
	}
	seg := Seg{Kind: SegWhere}
	for _, part := range splitUnquoted(inner, ',', from) {
		eq := indexUnquoted(part.text, '=')
		if eq < 0 {
			return bad(part.at, "%q is not field=value: in [...], conditions are separated by commas", strings.TrimSpace(part.text))
		}
		field := strings.TrimSpace(part.text[:eq])
		fieldAt := part.at + len(part.text[:eq]) - len(strings.TrimLeft(part.text[:eq], " "))
		if field == "" {
			return bad(part.at, "a condition needs a field before '='")
		}
		var names []string
		for _, f := range strings.Split(field, ".") {
			if f == "" {
				return bad(fieldAt, "empty field name in %q", field)
			}
			names = append(names, f)
		}
		raw := part.text[eq+1:]
		valueAt := part.at + eq + 1 + (len(raw) - len(strings.TrimLeft(raw, " ")))
		value := strings.TrimSpace(raw)
		if strings.HasPrefix(value, "\"") {
			text, n, ok := unquote(value)
			if !ok || strings.TrimSpace(value[n:]) != "" {
				return bad(valueAt, "a quoted value must end the condition: %s", value)
			}
			value = text
		}
		seg.Conds = append(seg.Conds, Cond{Field: names, Value: value, Pos: fieldAt, ValuePos: valueAt})
	}
	return seg, nil
}

type part struct {
	text string
	at   int
}

// splitUnquoted splits s at sep outside quotes; at is s's offset in the path.
func splitUnquoted(s string, sep byte, at int) []part {
	var out []part
	start := 0
	for {
		j := indexUnquoted(s[start:], sep)
		if j < 0 {
			return append(out, part{s[start:], at + start})
		}
		out = append(out, part{s[start : start+j], at + start})
		start += j + 1
	}
}

// indexUnquoted is the index of the first c in s outside quotes (-1: none).
func indexUnquoted(s string, c byte) int {
	inQuote := false
	for j := 0; j < len(s); j++ {
		switch {
		case s[j] == '\\' && inQuote:
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case s[j] == c && !inQuote:
			return j
		}
	}
	return -1
}

func hasUnquoted(s string, c byte) bool { return indexUnquoted(s, c) >= 0 }

// String writes the path's steps back, in the form a path is written.
func (p Path) String() string { return JoinSegs(p.Segs) }

// JoinSegs writes steps as a path ("" for none): where an error happened, say.
func JoinSegs(segs []Seg) string {
	var b strings.Builder
	for _, s := range segs {
		switch s.Kind {
		case SegIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
			continue
		case SegName:
			b.WriteString("[" + strconv.Quote(s.Text) + "]")
			continue
		case SegWhere:
			b.WriteString("[")
			for i, c := range s.Conds {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(strings.Join(c.Field, ".") + "=" + quoteIfNeeded(c.Value))
			}
			b.WriteString("]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if s.Quoted || strings.ContainsAny(s.Text, `."[]`) {
			b.WriteString(strconv.Quote(s.Text))
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, `,]"= `) {
		return strconv.Quote(s)
	}
	return s
}
