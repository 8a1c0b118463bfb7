package interp

import (
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// A logs step of a local file reads what was written since a mark: the run's start or the
// start of the step its since names. Lines with timestamps say when they were written; for
// lines without, the run notes where the file ends at the mark (schema.FileMark), and the
// read takes only what the file gained after.

// fileMarkKey names one noted file: the step whose start is the mark ("": the run's) and
// the file's path as the step reads it.
type fileMarkKey struct{ since, path string }

// fileReaders lists, by the step whose start is their mark ("": the run's start), the steps
// that read a local file since it. A since with ${...} names no step before the run: its
// reads find no mark, and the driver refuses lines it cannot place.
func fileReaders(sc *dsl.Scenario) map[string][]*dsl.Step {
	out := map[string][]*dsl.Step{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			fm, ok := s.Params.(schema.FileMarked)
			if !ok {
				return
			}
			if _, since, ok := fm.MarkedFile(); ok && !strings.Contains(since, "${") {
				out[since] = append(out[since], s)
			}
		})
	}
	return out
}

// markFiles notes where the files read since the mark ends now, before the mark's step (or
// the run) starts: a line written from then on is after the mark. A file whose path holds a
// ${...} that cannot be filled yet, or that cannot be noted, is not: its read finds no mark.
func (ru *run) markFiles(since string) {
	for _, s := range ru.fileReaders[since] {
		params := s.Params
		if s.HasTemplates() {
			p, err := ru.resolve(s)
			if err != nil {
				continue
			}
			params = p
		}
		fm, ok := params.(schema.FileMarked)
		if !ok {
			continue
		}
		file, _, ok := fm.MarkedFile()
		if !ok {
			continue
		}
		marker, ok := ru.targetOf(s).Logs.(schema.FileMarker)
		if !ok {
			continue
		}
		path := ru.file(file)
		ru.mu.Lock()
		_, done := ru.fileMarks[fileMarkKey{since, path}]
		ru.mu.Unlock()
		if done {
			continue
		}
		mark, err := marker.MarkFile(path)
		if err != nil {
			continue
		}
		ru.mu.Lock()
		ru.fileMarks[fileMarkKey{since, path}] = &mark
		ru.mu.Unlock()
	}
}

// file is the path a step's file names: relative to the scenario's directory.
func (ru *run) file(path string) string {
	if !strings.HasPrefix(path, "/") && ru.sc.Dir != "" {
		return ru.sc.Dir + "/" + path
	}
	return path
}
