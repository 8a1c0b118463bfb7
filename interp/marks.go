package interp

import (
	"context"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// A logs step reads what was written since a mark: the run's start or the start of the step
// its since names. Lines with timestamps say when they were written; for a local file's
// lines without, the run notes where the file ends at the mark (schema.FileMark), and the
// read takes only what the file gained after. For pods' logs, the run notes the pods the
// read names at the mark (schema.PodMark): one gone by the read wrote lines since the mark
// that cannot be read.

// fileMarkKey names one noted file: the step whose start is the mark ("": the run's) and
// the file's path as the step reads it.
type fileMarkKey struct{ since, path string }

// podMarkKey names one noted set of pods: the step whose start is the mark ("": the run's),
// the cluster, and the pod or selector in its namespace.
type podMarkKey struct{ since, cluster, namespace, pod, selector string }

// markReaders lists, by the step whose start is their mark ("": the run's start), the steps
// that read a local file or pods' logs since it. A since with ${...} names no step before
// the run: its reads find no mark (the driver refuses a file's lines it cannot place; a read
// of pods warns).
func markReaders(sc *dsl.Scenario) map[string][]*dsl.Step {
	out := map[string][]*dsl.Step{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if since, ok := markedSince(s.Params); ok && !strings.Contains(since, "${") {
				out[since] = append(out[since], s)
			}
		})
	}
	return out
}

// markedSince is the mark of a step that reads a file or pods since one.
func markedSince(params schema.Params) (string, bool) {
	if fm, ok := params.(schema.FileMarked); ok {
		if _, since, ok := fm.MarkedFile(); ok {
			return since, true
		}
	}
	if pm, ok := params.(schema.PodsMarked); ok {
		if _, since, ok := pm.MarkedPods(); ok {
			return since, true
		}
	}
	return "", false
}

// mark notes where the files read since the mark end now, and which pods the reads of pods
// name, before the mark's step (or the run) starts: a line written from then on is after the
// mark. A file or pods whose reference holds a ${...} that cannot be filled yet are not
// noted: the read finds no mark. Nor is a file that cannot be noted; pods that cannot be
// listed are noted with why.
func (ru *run) mark(ctx context.Context, since string) {
	for _, s := range ru.markReaders[since] {
		params := s.Params
		if s.HasTemplates() {
			p, err := ru.resolve(s)
			if err != nil {
				continue
			}
			params = p
		}
		if fm, ok := params.(schema.FileMarked); ok {
			if file, _, ok := fm.MarkedFile(); ok {
				ru.markFile(s, since, file)
			}
		}
		if pm, ok := params.(schema.PodsMarked); ok {
			if ref, _, ok := pm.MarkedPods(); ok {
				ru.markPods(ctx, s, since, ref)
			}
		}
	}
}

// markFile notes where the file that s reads ends now.
func (ru *run) markFile(s *dsl.Step, since, file string) {
	marker, ok := ru.targetOf(s).Logs.(schema.FileMarker)
	if !ok {
		return
	}
	path := ru.file(file)
	ru.mu.Lock()
	_, done := ru.fileMarks[fileMarkKey{since, path}]
	ru.mu.Unlock()
	if done {
		return
	}
	mark, err := marker.MarkFile(path)
	if err != nil {
		return
	}
	ru.mu.Lock()
	ru.fileMarks[fileMarkKey{since, path}] = &mark
	ru.mu.Unlock()
}

// markPods notes the pods that s reads the logs of now.
func (ru *run) markPods(ctx context.Context, s *dsl.Step, since string, ref schema.PodRef) {
	marker, ok := ru.targetOf(s).Logs.(schema.PodMarker)
	if !ok {
		return
	}
	ref.Namespace = ru.namespace(ref.Namespace)
	key := podMarkKey{since, ru.sc.ClusterOf(s), ref.Namespace, ref.Pod, ref.Selector}
	ru.mu.Lock()
	_, done := ru.podMarks[key]
	ru.mu.Unlock()
	if done {
		return
	}
	mark, err := marker.MarkPods(ctx, ref)
	if err != nil {
		mark = schema.PodMark{Err: err.Error()}
	}
	ru.mu.Lock()
	ru.podMarks[key] = &mark
	ru.mu.Unlock()
}

// file is the path a step's file names: relative to the scenario's directory.
func (ru *run) file(path string) string {
	if !strings.HasPrefix(path, "/") && ru.sc.Dir != "" {
		return ru.sc.Dir + "/" + path
	}
	return path
}

// stopMarks stops following the pods the marks follow (schema.PodsSince) when the run ends.
func (ru *run) stopMarks() {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	for _, m := range ru.podMarks {
		if m.Since != nil {
			m.Since.Stop()
		}
	}
}
