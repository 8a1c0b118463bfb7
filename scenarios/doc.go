// Package scenarios holds no Go code: its .cue files (CUE package scenarios, with the shared
// kits in ../scenarios.cue) are the seed labs as labrun scenarios, run as
// `labrun scenarios/<id>.cue`. Its tests load them, pin their plans in testdata/plans
// (LABRUN_UPDATE=1 rewrites the goldens), judge their expectations on the seeds' recorded
// figures, and check the traps the kits keep out. CLAIMS.md lists every claim of the seeds and
// the expectation that encodes it (TestClaims keeps it true); MUTATION.md scores the
// expectations on mutants of the recorded figures (TestMutationScores); wrong_test.go replays
// run records edited into outcomes the seeds rule out, each of which must fail.
package scenarios
