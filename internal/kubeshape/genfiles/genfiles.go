// Package genfiles writes and checks what kubeshape's generators make: a gzipped JSON file of
// shapes and the Go file beside it (./gen: groups.json.gz, groups_gen.go; ./genistio:
// istio.json.gz, istio_gen.go).
package genfiles

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data gzipped to dir/name+".json.gz" and src to dir/name+"_gen.go".
func Write(dir, name string, data, src []byte) error {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json.gz"), gz.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+"_gen.go"), src, 0o644)
}

// UpToDate says whether dir's name.json.gz and name_gen.go are what Write wrote of data and
// src; the JSON is compared unzipped (another Go's compressor may write other bytes for it).
// from says what the files are made from, for the message of a stale one.
func UpToDate(dir, name, from string, data, src []byte) error {
	stale := func(file string) error {
		return fmt.Errorf("internal/kubeshape/%s is stale (%s changed): run `go generate ./internal/kubeshape`", file, from)
	}
	gzName, goName := name+".json.gz", name+"_gen.go"
	gz, err := os.ReadFile(filepath.Join(dir, gzName))
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("%s: %w", gzName, err)
	}
	var got bytes.Buffer
	if _, err := got.ReadFrom(zr); err != nil {
		return fmt.Errorf("%s: %w", gzName, err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		return stale(gzName)
	}
	old, err := os.ReadFile(filepath.Join(dir, goName))
	if err != nil {
		return err
	}
	if !bytes.Equal(old, src) {
		return stale(goName)
	}
	return nil
}
