package lsp

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// object is the Kubernetes object the cursor is in: a struct literal that writes apiVersion
// and kind as strings (an apply's object, a wait's match, a kit's manifest), of a kind vet
// knows the shape of (kubeshape.Known: a built-in kind, an Istio CRD).
type object struct {
	kind  string           // as the API spells it
	shape *kubeshape.Shape // the whole object's
	below []string         // the path from the object to the cursor's value
	// statusDropped: the object is an apply's without subresource: "status", whose status
	// the API server drops (vet's lint status-dropped); completion leaves status out.
	statusDropped bool
}

// objectAt finds the innermost object around pl; nil when there is none. A step kind's own
// struct that names an apiVersion and kind (get, delete by name) is a query, not an object.
func objectAt(pl *place) *object {
	for i := len(pl.structs) - 1; i >= 0; i-- {
		st := pl.structs[i]
		apiVersion, kind := stringField(st.lit, "apiVersion"), stringField(st.lit, "kind")
		if apiVersion == "" || kind == "" {
			continue
		}
		if st.depth > 0 {
			if _, ok := schema.Kinds[pl.path[st.depth-1]]; ok {
				return nil
			}
		}
		sh, name := kubeshape.Known(apiVersion, kind)
		if sh == nil {
			return nil
		}
		return &object{kind: name, shape: sh, below: pl.path[st.depth:], statusDropped: inApplyOfObject(pl, i)}
	}
	return nil
}

// inApplyOfObject says whether the object whose struct is pl.structs[i] is written in an apply
// step that writes objects themselves, not their status subresource.
func inApplyOfObject(pl *place, i int) bool {
	for j := i - 1; j >= 0; j-- {
		st := pl.structs[j]
		if st.depth > 0 && pl.path[st.depth-1] == "apply" {
			return stringField(st.lit, "subresource") != "status"
		}
	}
	return false
}

// stringField is the string a struct literal's field label writes, unquoted; "" when it has
// none, or another value (a reference, an interpolation).
func stringField(s *ast.StructLit, label string) string {
	for _, el := range s.Elts {
		fd, ok := el.(*ast.Field)
		if !ok {
			continue
		}
		if name, _, err := ast.LabelName(fd.Label); err != nil || name != label {
			continue
		}
		lit, ok := fd.Value.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return ""
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return ""
		}
		return v
	}
	return ""
}

// shapeDetail says what a field of an object holds, as completion's detail.
func shapeDetail(sh *kubeshape.Shape) string {
	switch sh.Kind {
	case kubeshape.Object:
		return "object"
	case kubeshape.Map:
		return "map"
	case kubeshape.List:
		return "list"
	case kubeshape.Scalar:
		if len(sh.Enum) > 0 {
			return "one of " + strings.Join(sh.Enum, ", ")
		}
		return sh.Scalar.String()
	}
	return "any value"
}

// completeObjectFields lists the fields the object's kind has at the cursor's struct, those
// written there left out; nil when the cursor is in no object, or where its kind's shape
// names no fields (a map, a free-form value).
func completeObjectFields(pl *place, t *text, off int) ([]protocol.CompletionItem, bool) {
	obj := objectAt(pl)
	if obj == nil {
		return nil, false
	}
	at := obj.shape.At(obj.below)
	if at == nil || at.Kind != kubeshape.Object {
		return nil, true
	}
	word := off
	for word > 0 && isWordByte(t.src[word-1]) {
		word--
	}
	var items []protocol.CompletionItem
	for i, name := range at.FieldNames() {
		if pl.present[name] || (name == "status" && len(obj.below) == 0 && obj.statusDropped) {
			continue
		}
		doc := fmt.Sprintf("%s %s", obj.kind, strings.Join(append(append([]string{}, obj.below...), name), "."))
		it := item(name, protocol.CompletionItemKindField, shapeDetail(at.Fields[name]), doc, fmt.Sprintf("%03d", i))
		it.TextEdit = edit(t, word, off, name+": ")
		items = append(items, it)
	}
	return items, true
}

// completeObjectEnum offers the values an enum field of the object's kind allows, inside
// its string; nil elsewhere.
func completeObjectEnum(pl *place, t *text, off int) []protocol.CompletionItem {
	if pl == nil || pl.lit == nil || off < pl.litStart {
		return nil
	}
	obj := objectAt(pl)
	if obj == nil {
		return nil
	}
	at := obj.shape.At(obj.below)
	if at == nil || at.Kind != kubeshape.Scalar || len(at.Enum) == 0 {
		return nil
	}
	written := t.src[pl.litStart:off]
	var items []protocol.CompletionItem
	for i, v := range at.Enum {
		if !strings.HasPrefix(strings.ToUpper(v), strings.ToUpper(written)) {
			continue
		}
		it := item(v, protocol.CompletionItemKindEnumMember, obj.kind+" "+strings.Join(obj.below, "."), "", fmt.Sprintf("%03d", i))
		it.TextEdit = edit(t, pl.litStart, off, v)
		items = append(items, it)
	}
	return items
}

// hoverObjectField explains the field of a Kubernetes object whose name is under the cursor
// (outside expressions): what its kind's shape, which vet checks objects with, has there.
func hoverObjectField(d *document, t *text, pos protocol.Position) *protocol.Hover {
	off := t.offset(pos)
	start, end := off, off
	for start > 0 && isWordByte(t.src[start-1]) {
		start--
	}
	for end < len(t.src) && isWordByte(t.src[end]) {
		end++
	}
	if start == end || end >= len(t.src) || !strings.HasPrefix(strings.TrimLeft(t.src[end:], " "), ":") {
		return nil // not a label
	}
	pl := locate(cueSource(d.path, t.src), start)
	if pl == nil || !pl.inStruct {
		return nil
	}
	obj := objectAt(pl)
	if obj == nil {
		return nil
	}
	below := append(append([]string{}, obj.below...), t.src[start:end])
	at := obj.shape.At(below)
	if at == nil {
		return nil
	}
	md := fmt.Sprintf("`%s %s`: %s", obj.kind, strings.Join(below, "."), shapeDetail(at))
	if at.Kind == kubeshape.Object {
		md += "; its fields: " + strings.Join(at.FieldNames(), ", ")
	}
	r := protocol.Range{Start: t.position(start), End: t.position(end)}
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md}, Range: &r}
}
