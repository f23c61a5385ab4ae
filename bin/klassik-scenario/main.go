package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = "USAGE: klassik-scenario.sh list | <scenario>"

// run is the command: "list" prints the scenarios, a name replays one.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "list":
		for _, sc := range scenarios {
			fmt.Fprintf(stdout, "%-20s %s\n", sc.name, sc.desc)
		}
		return 0
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return 0
	}
	sc, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "klassik-scenario: unknown scenario %q (bin/klassik-scenario.sh list shows them)\n", args[0])
		return 2
	}
	return replay(ctx, sc, stdout)
}
