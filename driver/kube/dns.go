package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	"labrun.dev/labrun/schema"
)

// defaultHostsFile is where the lab's CoreDNS hosts plugin reads its records, in the writer
// container.
const defaultHostsFile = "/hosts/addn"

// SetRecords sets the addresses of one host name in a CoreDNS hosts file inside a pod, through
// the pod's writer container, and leaves every other host name's lines byte for byte as they
// were. It reads the file (`cat FILE`; a missing file is empty), rewrites the host's lines here,
// and writes the result with the one shell command labrun itself runs (argv, not a command line:
// the names and the size are arguments, never pasted into the script):
//
//	sh -c 'head -c "$2" > "$0" && n=$(wc -c < "$0") && [ $n -eq "$2" ] && mv -f "$0" "$1" || { rm -f "$0"; exit 1; }' \
//	    FILE.tmp.<random> FILE <size>
//
// with the content on stdin. Writing a temp file and renaming it means CoreDNS, which re-reads
// the file when its mtime or size changes, never sees a half-written file. head -c reads exactly
// the content's size rather than waiting for the end of stdin, which some kubelets never signal
// (kwok v0.8.0 does not close the command's stdin); the size check refuses a short read. The
// writer container needs sh, head, wc and mv (busybox has them). Two dns steps of this run on the
// same file take turns; nothing guards against another writer outside labrun.
func (d *driver) SetRecords(ctx context.Context, req schema.DNS) error {
	if req.Server == nil || (req.Server.Pod == "" && req.Server.Selector == "") {
		return errors.New("dns: the kube target writes a CoreDNS hosts file in a pod: give server: {pod or selector, container, file}")
	}
	if err := checkHostName(req.Host); err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	for _, a := range req.Addresses {
		if _, err := netip.ParseAddr(a); err != nil {
			return fmt.Errorf("dns %s: address %q is not an IP address", req.Host, a)
		}
	}
	ns := d.ns(req.Server.Namespace)
	file := req.Server.File
	if file == "" {
		file = defaultHostsFile
	}
	if err := d.guard.namespace(fmt.Sprintf("dns %s (hosts file %s in %s)", req.Host, file, req.Server.PodRef), ns); err != nil {
		return err
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	pod, err := d.pickPod(ctx, ns, req.Server.Pod, req.Server.Selector, false)
	if err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	container := req.Server.Container
	if container == "" {
		container = defaultContainer(pod)
	}
	unlock := d.dnsLocks.lock(ns + "/" + pod.Name + "/" + container + "/" + file)
	defer unlock()

	r, err := d.stream(ctx, ns, pod.Name, container, []string{"cat", file}, nil)
	if err != nil {
		return fmt.Errorf("dns: reading %s: %w", file, err)
	}
	old := r.stdout
	if r.exit != 0 {
		if !bytes.Contains(r.stderr, []byte("No such file")) {
			return fmt.Errorf("dns: cat %s in %s/%s container %s exited with code %d: %s", file, ns, pod.Name, container, r.exit, tail(r.stderr, 3))
		}
		old = nil
	}
	content, changed := rewriteHosts(old, req.Host, req.Addresses)
	if !changed {
		return nil
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := file + ".tmp." + hex.EncodeToString(rnd[:])
	w, err := d.stream(ctx, ns, pod.Name, container,
		[]string{"sh", "-c", writeScript, tmp, file, strconv.Itoa(len(content))},
		bytes.NewReader(content))
	if err != nil {
		return fmt.Errorf("dns: writing %s: %w", file, err)
	}
	if w.exit != 0 {
		return fmt.Errorf("dns: writing %s in %s/%s container %s: exit code %d: %s", file, ns, pod.Name, container, w.exit, tail(w.stderr, 3))
	}
	return nil
}

// writeScript writes stdin's first $2 bytes to the temp file $0 and renames it to $1.
const writeScript = `head -c "$2" > "$0" && n=$(wc -c < "$0") && [ $n -eq "$2" ] && mv -f "$0" "$1" || { rm -f "$0"; exit 1; }`

// checkHostName refuses what cannot be one host name in a hosts file.
func checkHostName(h string) error {
	if h == "" {
		return errors.New("empty host name")
	}
	if strings.ContainsAny(h, " \t\r\n#") {
		return fmt.Errorf("host name %q contains a space, a line break or #", h)
	}
	return nil
}

// sameHost compares host names as DNS does: case-insensitive, trailing dot ignored.
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// rewriteHosts sets host's addresses in a hosts file. Lines that do not name host are kept byte
// for byte. The new "<addr> <host>" lines replace host's first line; host is removed from the
// other lines that name it (a line left with no name is dropped). A host not in the file is
// appended; no addresses removes it. changed is false when the content stays the same.
func rewriteHosts(content []byte, host string, addrs []string) (out []byte, changed bool) {
	var b bytes.Buffer
	var newLines bytes.Buffer
	for _, a := range addrs {
		newLines.WriteString(a + " " + host + "\n")
	}
	inserted := false
	rest := content
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		kept, ours := withoutHost(line, host)
		if !ours {
			b.Write(line)
			continue
		}
		if !inserted {
			b.Write(newLines.Bytes())
			inserted = true
		}
		b.Write(kept)
	}
	if !inserted && newLines.Len() > 0 {
		if b.Len() > 0 && b.Bytes()[b.Len()-1] != '\n' {
			b.WriteByte('\n')
		}
		b.Write(newLines.Bytes())
	}
	return b.Bytes(), !bytes.Equal(b.Bytes(), content)
}

// withoutHost reports whether a hosts-file line names host and returns the line without it:
// nil when host was its only name, else "<addr> <other names>[ #comment]\n".
func withoutHost(line []byte, host string) (kept []byte, ours bool) {
	body, comment, hasComment := bytes.Cut(line, []byte("#"))
	f := strings.Fields(string(body))
	if len(f) < 2 {
		return nil, false
	}
	var others []string
	for _, name := range f[1:] {
		if sameHost(name, host) {
			ours = true
		} else {
			others = append(others, name)
		}
	}
	if !ours || len(others) == 0 {
		return nil, ours
	}
	s := f[0] + " " + strings.Join(others, " ")
	if hasComment {
		s += " #" + strings.TrimRight(string(comment), "\r\n")
	}
	return []byte(s + "\n"), true
}

// keyedMutex serialises work per key.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*sync.Mutex{}
	}
	m, ok := k.locks[key]
	if !ok {
		m = &sync.Mutex{}
		k.locks[key] = m
	}
	k.mu.Unlock()
	m.Lock()
	return m.Unlock
}
