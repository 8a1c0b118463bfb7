// Package secretmask is the one form in which labrun shows the value of a secret var (a
// scenario's secrets): "[secret NAME]", or "[secret NAME #i]" for the i-th value a sweep gives
// it, so that the runs of a sweep stay apart without showing what they ran with. vet's
// problems (dsl), the console, the records and the reports (interp's Redactor) and replay's
// reading of a redacted record all make and recognise masks here. It imports nothing of
// labrun, so that every layer can.
package secretmask

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const prefix = "[secret "

// Of is the mask of secret var name's value: "[secret NAME]".
func Of(name string) string { return prefix + name + "]" }

// Swept is the mask of the i-th value (counting from 1) that a sweep gives secret var name:
// "[secret NAME #i]".
func Swept(name string, i int) string { return prefix + name + " #" + strconv.Itoa(i) + "]" }

// Is says whether v is a mask ("[secret NAME]", "[secret NAME #i]"): the value of a secret var
// in a scenario loaded with a record's vars (replay, merge, mutate), which is hidden already.
// Masked again, a swept secret's "[secret token #2]" read "[secret token]", and replay refused
// the record of a run of a sweep of a secret: its step "ran \"echo [secret token #2]\" and
// would now run \"echo [secret token]\"".
func Is(v string) bool {
	name, ok := strings.CutPrefix(v, prefix)
	if !ok || !strings.HasSuffix(name, "]") {
		return false
	}
	name = strings.TrimSuffix(name, "]")
	if i := strings.LastIndex(name, " #"); i >= 0 {
		n := name[i+2:]
		name = name[:i]
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return false
		}
	}
	return name != "" && !strings.ContainsAny(name, " []")
}

// Mentions says whether s holds a mask of secret var name, swept or not.
func Mentions(s, name string) bool {
	return strings.Contains(s, Of(name)) || strings.Contains(s, prefix+name+" #")
}

// Pattern is a regular expression that matches a mask of secret var name, swept or not.
func Pattern(name string) string {
	return regexp.QuoteMeta(Of(name)) + "|" + regexp.QuoteMeta(prefix+name+" #") + `\d+\]`
}

// Masks pairs each value to hide with its mask, for the secret vars named secrets: each value
// sweep gives one (Swept, in the sweep's order), then its value in vars (Of, unless a sweep's
// value already). A value that is a mask already (Is) or empty is left out, and so is one seen
// before.
func Masks(secrets []string, vars map[string]any, sweep map[string][]string) [][2]string {
	var masks [][2]string
	seen := map[string]bool{}
	add := func(v, mask string) {
		if v != "" && !seen[v] && !Is(v) {
			seen[v] = true
			masks = append(masks, [2]string{v, mask})
		}
	}
	for _, name := range secrets {
		for i, v := range sweep[name] {
			add(v, Swept(name, i+1))
		}
		if v, ok := vars[name].(string); ok {
			add(v, Of(name))
		}
	}
	return masks
}

// Replacer hides each value of masks (as Masks pairs them) by its mask in a string, the longest
// value first, so that a value that holds another is hidden whole; nil when there is none.
func Replacer(masks [][2]string) *strings.Replacer {
	if len(masks) == 0 {
		return nil
	}
	masks = slices.Clone(masks)
	slices.SortStableFunc(masks, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	var pairs []string
	for _, m := range masks {
		pairs = append(pairs, m[0], m[1])
	}
	return strings.NewReplacer(pairs...)
}
