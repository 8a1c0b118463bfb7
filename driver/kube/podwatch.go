package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// podsSince follows the pods a selector matches in a namespace from a mark (the resource
// version of the list the mark read) until Stop (schema.PodsSince): a pod created after the
// mark and deleted before the read wrote lines since the mark that neither the mark nor the
// read sees, and "no 503 since the mark" would pass over the pod that logged it. It watches
// as an informer does, from the list's resource version, and watches again from the last
// version it saw when the API server ends a watch (it does after a few minutes).
type podsSince struct {
	mu     sync.Mutex
	came   map[types.UID]string // the pods seen matching since the mark, to their names; those there at it left out
	lost   string
	atMark map[string]string // the UIDs noted at the mark, by name
	stop   context.CancelFunc
	done   chan struct{}
}

// watchPods starts following the pods sel matches in ns from resource version rv. Its
// watch outlives ctx's deadline (not its values): Stop ends it.
func (d *driver) watchPods(ctx context.Context, ns, sel, rv string, atMark map[string]string) *podsSince {
	ctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	ps := &podsSince{came: map[types.UID]string{}, atMark: atMark, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(ps.done)
		err := ps.follow(ctx, d.streamCS.CoreV1().Pods(ns), sel, rv)
		if err != nil && ctx.Err() == nil {
			ps.mu.Lock()
			ps.lost = fmt.Sprintf("the watch of pods %s/{%s} ended: %v", ns, sel, err)
			ps.mu.Unlock()
		}
	}()
	return ps
}

// follow watches until ctx ends or the API server refuses to go on.
func (ps *podsSince) follow(ctx context.Context, pods pods, sel, rv string) error {
	for {
		w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			return err
		}
		rv, err = ps.read(w, rv)
		w.Stop()
		if err != nil {
			return err
		}
		// From the version seen last, a second later: nothing is missed meanwhile, and a
		// server that ends each watch at once is not asked again at once.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// read notes the pods of one watch's events until it ends; it returns the last resource
// version seen, to watch again from.
func (ps *podsSince) read(w watch.Interface, rv string) (string, error) {
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			if st, ok := ev.Object.(*metav1.Status); ok {
				return rv, apierrors.FromObject(st)
			}
			return rv, errors.New("the API server ended the watch with an error")
		case watch.Bookmark, watch.Added, watch.Modified, watch.Deleted:
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				return rv, fmt.Errorf("the watch sent a %T, not a pod", ev.Object)
			}
			rv = p.ResourceVersion
			if ev.Type == watch.Bookmark || ps.atMark[p.Name] == string(p.UID) || !ranAContainer(p) {
				continue
			}
			ps.mu.Lock()
			ps.came[p.UID] = p.Name
			ps.mu.Unlock()
		}
	}
	return rv, nil
}

// went are the pods seen matching since the mark that are not among now's (by UID), by name
// to UID: they came after the mark and went before the read. A pod that came in the instant
// before the read, its event not yet here, is not seen.
func (ps *podsSince) went(now map[string]*corev1.Pod) map[string]string {
	here := map[types.UID]bool{}
	for _, p := range now {
		here[p.UID] = true
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := map[string]string{}
	for uid, name := range ps.came {
		if !here[uid] {
			out[name] = string(uid)
		}
	}
	return out
}

func (ps *podsSince) Lost() string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.lost
}

func (ps *podsSince) Stop() {
	ps.stop()
	<-ps.done
}

// ranAContainer says whether one of p's containers has started: a pod deleted before that
// wrote no line.
func ranAContainer(p *corev1.Pod) bool {
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.RestartCount > 0 {
			return true
		}
	}
	return false
}
