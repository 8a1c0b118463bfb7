package fortio

import (
	"io"
	stdlog "log"
	"sync"

	flog "fortio.org/log"
)

// quietOnce guards quietFortio.
var quietOnce sync.Once

// quietFortio is the one place where this package changes fortio's process-wide state. It runs
// once, before the first load, and leaves the process like this:
//
//   - fortio.org/log writes nowhere (io.Discard) at level Critical: labrun reports what matters
//     as results and warnings, and fortio would otherwise print JSON or coloured lines to stderr,
//     for every failed request at the Error level. The high level also keeps the formatting of
//     those lines off the hot path.
//   - fortio.org/log's SetOutput also redirects the standard library's logger. That side effect
//     is undone here: the standard logger keeps the writer it had. fortio.org/log is put in JSON
//     mode without colour because its plain-text mode prints through the standard logger; the
//     JSON and colour modes use its own writer only.
//   - fortio.org/log's Fatalf panics instead of calling os.Exit, even if LOGGER_FATAL_PANICS
//     says otherwise: a library must not end the process. (fortio calls it only for impossible
//     states such as an empty runner list.)
//
// Left as they are: fortio.org/log's init already set the standard logger's flags to log.Ltime
// and read LOGGER_* variables when the package was linked in (before any of labrun runs); labrun
// does not use the standard logger. periodic installs a process-wide SIGINT handler only for runs
// without an Aborter; every run here has its own. fhttp.BufferSizeKb (the fast client's
// read buffer, 128 KiB) stays at fortio's default, as in the CLI; results that hit it get a
// warning (see convert).
func quietFortio() {
	quietOnce.Do(func() {
		std := stdlog.Writer()
		flog.Config.JSON = true
		flog.Config.ConsoleColor = false
		flog.Config.ForceColor = false
		flog.Config.FatalPanics = true
		flog.SetOutput(io.Discard) // also recomputes the colour mode: off, io.Discard is no terminal
		stdlog.SetOutput(std)
		flog.SetLogLevelQuiet(flog.Critical)
	})
}
