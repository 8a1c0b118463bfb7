package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiles are --cpuprofile and --memprofile: pprof files of this process, for users who want
// to say where labrun spends its time (go tool pprof FILE), and for labrun's own measurements.
type profiles struct {
	cpu, mem string
	cpuFile  *os.File
}

func (pr *profiles) flags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&pr.cpu, "cpuprofile", "", "write a CPU profile of this command to `FILE` (read it with go tool pprof)")
	root.PersistentFlags().StringVar(&pr.mem, "memprofile", "", "write a heap profile to `FILE` when the command ends (go tool pprof; -sample_index=alloc_space for allocations)")
}

// start begins the CPU profile; paths are relative to the process's directory.
func (pr *profiles) start(p *process) error {
	if pr.cpu == "" {
		return nil
	}
	f, err := os.Create(absFrom(p.Cwd, pr.cpu))
	if err != nil {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("--cpuprofile: %v", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("--cpuprofile: %v", err)}
	}
	pr.cpuFile = f
	return nil
}

// stop ends the CPU profile and writes the heap profile; a profile that could not be written
// is said on stderr (the command's own result stands).
func (pr *profiles) stop(p *process) {
	if pr.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := pr.cpuFile.Close(); err != nil {
			fmt.Fprintf(p.Stderr, "labrun: --cpuprofile: %v\n", err)
		}
		pr.cpuFile = nil
	}
	if pr.mem == "" {
		return
	}
	f, err := os.Create(absFrom(p.Cwd, pr.mem))
	if err == nil {
		runtime.GC() // the heap profile shows what was live at the last collection
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "labrun: --memprofile: %v\n", err)
	}
}

func absFrom(cwd, path string) string {
	if filepath.IsAbs(path) || cwd == "" {
		return path
	}
	return filepath.Join(cwd, path)
}
