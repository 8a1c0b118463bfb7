package schema

import "testing"

// TestApplyOptions: the defaults are server-side apply, forced (as before modes existed).
func TestApplyOptions(t *testing.T) {
	no := false
	for _, tc := range []struct {
		p    Apply
		want ApplyOptions
	}{
		{Apply{}, ApplyOptions{Mode: "apply", Force: true}},
		{Apply{Force: &no}, ApplyOptions{Mode: "apply", Force: false}},
		{Apply{Mode: "patch", Subresource: "status"}, ApplyOptions{Mode: "patch", Force: true, Subresource: "status"}},
	} {
		if got := tc.p.Options(); got != tc.want {
			t.Errorf("%+v.Options() = %+v, want %+v", tc.p, got, tc.want)
		}
	}
}
