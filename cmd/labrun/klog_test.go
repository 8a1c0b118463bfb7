package main

import (
	"errors"
	"io"
	"os"
	"testing"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// After quietLibraries, neither klog's error lines (which klog writes to stderr whatever its
// output, above its stderr threshold) nor client-go's HandleError reach stderr.
func TestQuietLibrariesSilencesKlog(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	quietLibraries()
	klog.Error("a klog error line")
	klog.ErrorS(errors.New("boom"), "a structured klog error")
	utilruntime.HandleError(errors.New("an unhandled error"))
	klog.Flush()
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if len(out) > 0 {
		t.Errorf("printed on stderr:\n%s", out)
	}
}
