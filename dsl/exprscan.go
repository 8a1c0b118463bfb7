package dsl

// The one reading of an expression's text outside its string literals, for what reads
// expressions as text rather than compiled: where a bracket closes (the judge's messages,
// vet's "never closed"), what a let binds in the editor, a chain's segments.

// SkipStrings is the index of the first byte of src at or after i that is in no string
// literal, i being in none: a literal that starts there is passed over whole, its quotes
// included ("…" and '…', in which a backslash escapes the byte after it; `…`, in which
// nothing is escaped, as expr reads them). len(src) when the text ends first, in an
// unclosed literal too. Brackets, quotes and the other bytes these readers look for are
// ASCII, which is never part of a multi-byte UTF-8 rune, so reading bytes is reading runes.
func SkipStrings(src string, i int) int {
	for i < len(src) {
		q := src[i]
		if q != '"' && q != '\'' && q != '`' {
			return i
		}
		for i++; i < len(src) && src[i] != q; i++ {
			if src[i] == '\\' && q != '`' {
				i++
			}
		}
		i++ // past the closing quote
	}
	return len(src)
}

// Brackets pairs the brackets of an expression's text ((, [ and {) outside its string
// literals: a closing bracket closes the last one still open, whatever its kind, and one
// with none open closes nothing.
type Brackets struct {
	closeOf, openOf map[int]int
	// Unclosed are the offsets of the brackets never closed, in order.
	Unclosed []int
}

// PairBrackets reads src's brackets (Brackets).
func PairBrackets(src string) Brackets {
	b := Brackets{closeOf: map[int]int{}, openOf: map[int]int{}}
	var open []int
	for i := SkipStrings(src, 0); i < len(src); i = SkipStrings(src, i+1) {
		switch src[i] {
		case '(', '[', '{':
			open = append(open, i)
		case ')', ']', '}':
			if n := len(open); n > 0 {
				b.closeOf[open[n-1]], b.openOf[i] = i, open[n-1]
				open = open[:n-1]
			}
		}
	}
	b.Unclosed = open
	return b
}

// Close is the offset of the bracket that closes the one at open, -1 if none does (or open
// is no opening bracket outside a string).
func (b Brackets) Close(open int) int {
	if c, ok := b.closeOf[open]; ok {
		return c
	}
	return -1
}

// Open is the offset of the bracket that the one at close closes, -1 if none.
func (b Brackets) Open(close int) int {
	if o, ok := b.openOf[close]; ok {
		return o
	}
	return -1
}

// ByteOffset is the byte offset in src of its rune index r (expr's error positions count
// runes), len(src) past its end.
func ByteOffset(src string, r int) int {
	n := 0
	for i := range src {
		if n == r {
			return i
		}
		n++
	}
	return len(src)
}
