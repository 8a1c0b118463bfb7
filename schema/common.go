package schema

import (
		"fmt"
	"net/url"
	"sort"
	"strings"
)

// checkHTTPURL checks an http(s) URL with a host (an admin or Prometheus endpoint).
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: expected http://host:port, e.g. \"http://127.0.0.1:15000\"", raw)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// A returns "a kind" or "an kind", for messages ("an exec step").
func A(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
