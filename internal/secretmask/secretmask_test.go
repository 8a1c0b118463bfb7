package secretmask

import (
	"regexp"
	"slices"
	"testing"
)

func TestMasks(t *testing.T) {
	for _, v := range []string{Of("token"), Swept("token", 2), Swept("a_b", 10)} {
		if !Is(v) {
			t.Errorf("Is(%q) = false, want true", v)
		}
		if !regexp.MustCompile(Pattern("token") + "|" + Pattern("a_b")).MatchString(v) {
			t.Errorf("Pattern does not match %q", v)
		}
	}
	for _, v := range []string{"", "[secret ]", "[secret token", "[secret token #]", "[secret token #x]", "[secret a b]", "x[secret token]"} {
		if Is(v) {
			t.Errorf("Is(%q) = true, want false", v)
		}
	}
	if !Mentions("echo [secret token #3]\n", "token") || !Mentions("[secret token]", "token") || Mentions("[secret tokens]", "token") {
		t.Error("Mentions: wrong")
	}
	got := Masks([]string{"token", "pw"}, map[string]any{"token": "b", "pw": Of("pw")}, map[string][]string{"token": {"a", "b"}})
	want := [][2]string{{"a", "[secret token #1]"}, {"b", "[secret token #2]"}}
	if !slices.Equal(got, want) {
		t.Errorf("Masks = %q, want %q (the var's value is a sweep's: masked as its #i; a mask stays)", got, want)
	}
}

// TestReplacer: a value that holds another is hidden whole, by its own mask, whatever the
// order of the masks; no mask gives no replacer.
func TestReplacer(t *testing.T) {
	masks := [][2]string{{"abc", Of("short")}, {"abcdef", Of("long")}}
	if got, want := Replacer(masks).Replace("x abcdef y abc"), "x [secret long] y [secret short]"; got != want {
		t.Errorf("Replace: %q, want %q", got, want)
	}
	if masks[0][0] != "abc" {
		t.Errorf("Replacer reordered its argument: %v", masks)
	}
	if Replacer(nil) != nil {
		t.Errorf("Replacer(nil) is not nil")
	}
}
