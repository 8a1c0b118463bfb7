package interp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
)

// JSON has no infinities and no NaN, and encoding/json refuses them; an expression may read
// one all the same: a product that overflows (x * 1e308), a value a get's JSON-like data
// holds, or, in a record made before a division by zero had no value (dsl/divisor.go), a
// ratio with no denominator (fortio.code503 / fortio.code200 with no 200 was +Inf and a claim
// over it passed; replayed now, the claim errs at its /). Records and summaries write a
// non-finite number as the string "+Inf", "-Inf" or "NaN" (docs/json.md), and read those
// strings back as the number where a value read by an expression is kept.

// Values are the numbers, strings and booleans an expression read, by source. A non-finite
// number is written as the string "+Inf", "-Inf" or "NaN" and read back as the number.
type Values map[string]any

// MarshalJSON writes the values, a non-finite number as its string.
func (v Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	m := make(map[string]any, len(v))
	for k, x := range v {
		m[k] = JSONNumber(x)
	}
	return MarshalUnescaped(m)
}

// MarshalUnescaped is json.Marshal without escaping <, > and &: what a MarshalJSON method
// returns, so that an encoder that does not escape them (labrun's -o json) shows them as
// they are, and one that does (json.Marshal) still escapes them.
func MarshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the values, the strings "+Inf", "-Inf" and "NaN" as the numbers.
func (v *Values) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, x := range m {
		if s, ok := x.(string); ok {
			if f, ok := ParseNonFinite(s); ok {
				m[k] = f
			}
		}
	}
	*v = m
	return nil
}

// JSONNumber is x as JSON can hold it: a non-finite float64 as "+Inf", "-Inf" or "NaN"
// (as strconv.FormatFloat spells them, with the sign of +Inf), anything else as it is.
func JSONNumber(x any) any {
	f, ok := x.(float64)
	switch {
	case !ok:
		return x
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return x
}

// ParseNonFinite reads the strings JSONNumber writes for a non-finite number.
func ParseNonFinite(s string) (float64, bool) {
	switch s {
	case "+Inf":
		return math.Inf(1), true
	case "-Inf":
		return math.Inf(-1), true
	case "NaN":
		return math.NaN(), true
	}
	return 0, false
}

// jsonLike is v, JSON-like data (maps, lists, numbers), with every non-finite number as its
// string; other values are returned as they are.
func jsonLike(v any) any {
	switch x := v.(type) {
	case float64:
		return JSONNumber(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonLike(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonLike(e)
		}
		return out
	}
	return v
}

// WithFiniteJSON is r, or, when r's value is JSON-like data (a config's, a get's) holding a
// non-finite number, a copy whose value has each such number as its string: what a record
// writes when r's plain JSON fails. Such a string is read back as a string (in such data a
// string "NaN" may be meant as one).
func (r *Result) WithFiniteJSON() *Result {
	c := *r
	c.Value = jsonLike(r.Value)
	return &c
}

// WithFiniteJSON is a shallow copy of r whose results are WithFiniteJSON's: what is encoded
// when r's plain JSON fails on a non-finite number in a result.
func (r *Record) WithFiniteJSON() *Record {
	c := *r
	if r.Results != nil {
		c.Results = make(map[string]*Result, len(r.Results))
		for k, v := range r.Results {
			c.Results[k] = v.WithFiniteJSON()
		}
	}
	return &c
}

// IsNonFinite says whether err is encoding/json refusing a non-finite number.
func IsNonFinite(err error) bool {
	var unsupported *json.UnsupportedValueError
	return errors.As(err, &unsupported)
}
