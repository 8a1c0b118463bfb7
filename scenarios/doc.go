// Package scenarios holds no Go code: its .cue files (CUE package scenarios, with the shared
// kits in ../scenarios.cue) are the seed labs as labrun scenarios, run as
// `labrun scenarios/<id>.cue`. Its tests load them, pin their plans in testdata/plans
// (LABRUN_UPDATE=1 rewrites the goldens), judge their expectations on the seeds' recorded
// figures, and check the traps the kits keep out.
package scenarios
