package kubeshape

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:generate go run ./gen
//go:generate go run ./genistio

// groupsData are the shapes of the kinds of k8s.io/api's stable groups besides core/v1 and
// apps/v1 (groupKinds says which is whose), written by ./gen: gzipped JSON, a list of nodes
// that refer to each other by index (a type is one node wherever it is: a Job and a CronJob
// share PodTemplateSpec's). Node 0 is an opaque value, node 1 a scalar of any JSON type;
// [1, t] a scalar of type t (ScalarType's numbers: a string, a number, a bool, a quantity);
// {"name": node, …} an object; [2, node] a map, [3, node] a list (the numbers are Kind's);
// [4, t, "A", "B", …] a scalar of type t that takes only the values listed (an enum);
// [4, 5, min, max, "format"] an integer from min to max (Shape.Min, Max, Format).
//
//go:embed groups.json.gz
var groupsData []byte

// groupKind is a kind whose shape groupsData holds, at node shape.
type groupKind struct {
	apiVersion, kind string
	shape            int
}

// lazyShapes are the nodes of a generated file, decoded on first use: vet of files that get no
// kind of its groups does not pay for them. None if the file does not decode (a test sees to
// it).
type lazyShapes struct {
	once   sync.Once
	shapes []*Shape
}

func (l *lazyShapes) of(data []byte) []*Shape {
	l.once.Do(func() {
		l.shapes, _ = decodeShapes(data)
	})
	return l.shapes
}

var groups lazyShapes

// groupShapes are groupsData's nodes (lazyShapes).
func groupShapes() []*Shape { return groups.of(groupsData) }

// decodeShapes decodes what EncodeShapes wrote, gzipped.
func decodeShapes(gz []byte) ([]*Shape, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	var nodes []json.RawMessage
	if err := json.NewDecoder(zr).Decode(&nodes); err != nil {
		return nil, err
	}
	if len(nodes) < 2 {
		return nil, fmt.Errorf("%d nodes, want an opaque and a scalar one first", len(nodes))
	}
	shapes := make([]*Shape, len(nodes))
	shapes[0], shapes[1] = opaque, scalar
	for i := 2; i < len(nodes); i++ {
		shapes[i] = new(Shape)
	}
	ref := func(i int) (*Shape, error) {
		if i < 0 || i >= len(shapes) {
			return nil, fmt.Errorf("node %d of %d", i, len(shapes))
		}
		return shapes[i], nil
	}
	for i := 2; i < len(nodes); i++ {
		sh, n := shapes[i], nodes[i]
		if len(n) > 0 && n[0] == '{' {
			var fields map[string]int
			if err := json.Unmarshal(n, &fields); err != nil {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
			sh.Kind, sh.Fields = Object, make(map[string]*Shape, len(fields))
			for name, j := range fields {
				if sh.Fields[name], err = ref(j); err != nil {
					return nil, fmt.Errorf("node %d field %s: %w", i, name, err)
				}
			}
			continue
		}
		if bytes.HasPrefix(n, []byte(fmt.Sprintf("[%d,%d,", Scalar, IntegerScalar))) {
			var node []json.RawMessage
			*sh = Shape{Kind: Scalar, Scalar: IntegerScalar}
			if json.Unmarshal(n, &node) != nil || len(node) != 5 || json.Unmarshal(node[2], &sh.Min) != nil ||
				json.Unmarshal(node[3], &sh.Max) != nil || json.Unmarshal(node[4], &sh.Format) != nil {
				return nil, fmt.Errorf("node %d: %s is no [%d, %d, min, max, format]", i, n, Scalar, IntegerScalar)
			}
			continue
		}
		var a []int
		if err := json.Unmarshal(n, &a); err != nil {
			var enum []any
			if json.Unmarshal(n, &enum) != nil || len(enum) < 3 || enum[0] != float64(Scalar) || enum[1] != float64(StringScalar) {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
			*sh = Shape{Kind: Scalar, Scalar: StringScalar}
			for _, e := range enum[2:] {
				str, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("node %d: enum value %v is no string", i, e)
				}
				sh.Enum = append(sh.Enum, str)
			}
			continue
		}
		if len(a) == 2 && Kind(a[0]) == Scalar && ScalarType(a[1]) > AnyScalar && ScalarType(a[1]) <= QuantityScalar {
			*sh = Shape{Kind: Scalar, Scalar: ScalarType(a[1])}
			continue
		}
		if len(a) != 2 || (Kind(a[0]) != Map && Kind(a[0]) != List) {
			return nil, fmt.Errorf("node %d: %s is no object, map, list or typed scalar", i, n)
		}
		sh.Kind = Kind(a[0])
		if sh.Elem, err = ref(a[1]); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
	}
	return shapes, nil
}

// EncodeShapes writes roots and what they hold as the nodes groupsData holds (not gzipped),
// and the node of each root: ./gen writes groups.json.gz with it. The nodes are numbered in
// the order a walk from the roots first reaches them (an object's fields by name), so the same
// shapes give the same bytes.
func EncodeShapes(roots []*Shape) ([]byte, []int, error) {
	nodes := []any{[]int{int(Opaque)}, []int{int(Scalar)}}
	index := map[*Shape]int{opaque: 0, scalar: 1}
	elems := map[[2]int]int{} // a map or list of a node, a scalar of a type: one node
	enums := map[string]int{} // a scalar of the same values, an integer of the same range: one node
	var walk func(sh *Shape) int
	walk = func(sh *Shape) int {
		if i, ok := index[sh]; ok {
			return i
		}
		switch sh.Kind {
		case Opaque:
			return 0
		case Scalar:
			if sh.Scalar == AnyScalar {
				return 1
			}
			if len(sh.Enum) > 0 || sh.Scalar == IntegerScalar {
				node := []any{int(Scalar), int(sh.Scalar)}
				if sh.Scalar == IntegerScalar {
					node = append(node, sh.Min, sh.Max, sh.Format)
				}
				for _, e := range sh.Enum {
					node = append(node, e)
				}
				key, _ := json.Marshal(node)
				if i, ok := enums[string(key)]; ok {
					return i
				}
				i := len(nodes)
				enums[string(key)] = i
				nodes = append(nodes, node)
				return i
			}
			// Its JSON type: a value of another never equals it (Check says so), and a
			// quantity compares as one.
			key := [2]int{int(Scalar), int(sh.Scalar)}
			if i, ok := elems[key]; ok {
				return i
			}
			i := len(nodes)
			elems[key] = i
			nodes = append(nodes, key[:])
			return i
		case Object:
			i := len(nodes)
			index[sh] = i
			fields := map[string]int{}
			nodes = append(nodes, fields)
			for _, name := range sh.FieldNames() {
				fields[name] = walk(sh.Fields[name])
			}
			return i
		default: // Map, List
			e := walk(sh.Elem)
			key := [2]int{int(sh.Kind), e}
			if i, ok := elems[key]; ok {
				index[sh] = i
				return i
			}
			i := len(nodes)
			index[sh], elems[key] = i, i
			nodes = append(nodes, key[:])
			return i
		}
	}
	at := make([]int, len(roots))
	for i, r := range roots {
		at[i] = walk(r)
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, n := range nodes {
		j, err := json.Marshal(n)
		if err != nil {
			return nil, nil, err
		}
		b.Write(j)
		if i < len(nodes)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes(), at, nil
}
