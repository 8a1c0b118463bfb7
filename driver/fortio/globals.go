package fortio

import (
	"io"
	stdlog "log"
	"net/http"
	"sync"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/fnet"
	flog "fortio.org/log"
)

// tameOnce guards tameFortio.
var tameOnce sync.Once

// resolveMethod is the value tameFortio gives fnet.FlagResolveMethod; see there.
const resolveMethod = "rr"

// tameFortio is the one place where this package changes fortio's process-wide state. It runs
// once, before the first load or the first use of EchoHandler, and leaves the process like this:
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
//   - fnet.FlagResolveMethod is "rr": every new connection resolves the host name again and
//     takes the next address of the current answer. fortio's default, "cached-rr", keeps the
//     first answer that has two or more addresses in one process-wide cache (one host name for
//     every load of the process) and never asks again while the same host is loaded: a name
//     flipped from [a b] to [c] would still be dialled at a and b, and a scenario that follows a
//     DNS flip (the seeds' GSLB labs, `dns` steps) would measure fortio's cache, not the flip.
//     Single-address answers were never cached, which hid this from one-address flips. "rr"
//     does what a client that honours DNS does: a connection opened after a flip goes where the
//     name points now. (resolveEachConnection: false still pins each connection's first answer,
//     as the step asks.)
//
// Left as they are: fortio.org/log's init already set the standard logger's flags to log.Ltime
// and read LOGGER_* variables when the package was linked in (before any of labrun runs); labrun
// does not use the standard logger. periodic installs a process-wide SIGINT handler only for runs
// without an Aborter; every run here has its own. fhttp.BufferSizeKb (the fast client's
// read buffer, 128 KiB) stays at fortio's default, as in the CLI; results that hit it get a
// warning (see convert). fnet.FlagResolveIPType stays "ip4" (fortio's default): lab names
// resolve to IPv4 loopback addresses.
func tameFortio() {
	tameOnce.Do(func() {
		std := stdlog.Writer()
		flog.Config.JSON = true
		flog.Config.ConsoleColor = false
		flog.Config.ForceColor = false
		flog.Config.FatalPanics = true
		flog.SetOutput(io.Discard) // also recomputes the colour mode: off, io.Discard is no terminal
		stdlog.SetOutput(std)
		flog.SetLogLevelQuiet(flog.Critical)
		if err := fnet.FlagResolveMethod.SetV(resolveMethod); err != nil {
			// Only a fortio that dropped the method would refuse it; say so loudly, once.
			panic("fortio: setting the DNS resolve method: " + err.Error())
		}
	})
}

// EchoHandler returns fortio's echo handler (?status=503, ?status=503:50, ?size=, ?header=,
// ?close=, ?delay= up to fortio's own cap, ...), with fortio's process-wide state tamed first so
// that the handler's own log lines (a client that resets mid-response, say) go nowhere. The local
// target's backends serve it.
func EchoHandler() http.Handler {
	tameFortio()
	return http.HandlerFunc(fhttp.EchoHandler)
}
