// Command labrun runs Istio/Envoy lab experiments written in CUE: `labrun scenarios/s6.cue`.
package main

import "os"

func main() { os.Exit(Main(newProcess())) }
