// Command sessions-etl validates, migrates, exports and reports on the JSONL
// session logs of pi-agent, Atomic and Prime Agent. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
