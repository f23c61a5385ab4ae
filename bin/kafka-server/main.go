// Command kafka-server runs one Klassik broker, as Kafka's kafka.Kafka main
// does: kafka-server <server.properties> [--override key=value ...].
//
// bin/kafka-server-start.sh execs it through bin/kafka-run-class.sh, so the
// process receives SIGTERM from kafka-server-stop.sh directly; SIGTERM and
// SIGINT trigger an orderly shutdown (controlled shutdown, then close) and the
// process exits 0. A configuration problem exits 1 with a message naming the
// offending key.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/klassik/klassik/broker"
	"github.com/klassik/klassik/broker/loglevels"
	"github.com/klassik/klassik/config"
)

// version is printed by --version; the build may override it with -ldflags.
var version = "3.4.0-klassik"

const usage = "USAGE: kafka-server [-Dname=value]* server.properties [--override property=value]*"

type args struct {
	path      string
	overrides map[string]string
	// sysProps are the JVM system properties (-Dname=value) that
	// kafka-server-start.sh takes from KAFKA_OPTS, e.g.
	// -Djava.security.auth.login.config=<JAAS file>.
	sysProps map[string]string
	version  bool
}

// parseArgs accepts Kafka's command line: the properties file first, then any
// number of "--override k=v" (also "--override=k=v").
func parseArgs(argv []string) (args, error) {
	a := args{overrides: map[string]string{}, sysProps: map[string]string{}}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		switch {
		case arg == "--version" || arg == "-version":
			a.version = true
		case arg == "--override" || strings.HasPrefix(arg, "--override="):
			var kv string
			if arg == "--override" {
				if i+1 >= len(argv) {
					return a, errors.New("--override needs a property=value argument")
				}
				i++
				kv = argv[i]
			} else {
				kv = strings.TrimPrefix(arg, "--override=")
			}
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return a, fmt.Errorf("invalid override %q: expected property=value", kv)
			}
			a.overrides[k] = v
		case strings.HasPrefix(arg, "-D") && len(arg) > 2:
			k, v, _ := strings.Cut(arg[2:], "=")
			if k == "" {
				return a, fmt.Errorf("invalid system property %q: expected -Dname=value", arg)
			}
			a.sysProps[k] = v
		case strings.HasPrefix(arg, "-") && arg != "-":
			return a, fmt.Errorf("unknown option %q", arg)
		default:
			if a.path != "" {
				return a, fmt.Errorf("unexpected argument %q: only one properties file is accepted", arg)
			}
			a.path = arg
		}
	}
	if a.path == "" && !a.version {
		return a, errors.New("missing the server.properties file")
	}
	return a, nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without os.Exit, so tests can drive it.
func run(argv []string, stdout, stderr io.Writer) int {
	a, err := parseArgs(argv)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n%s\n", err, usage)
		return 1
	}
	if a.version {
		fmt.Fprintln(stdout, version)
		return 0
	}
	// Kafka's config/log4j.properties: the root logger at INFO; the
	// BROKER_LOGGER resource changes levels at run time, so the text
	// handler lets every level through and the registry decides.
	logLevels := loglevels.NewRegistry(loglevels.LevelInfo)
	logger := slog.New(loglevels.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: loglevels.LevelAll}), logLevels))
	cfg, err := config.Load(a.path, a.overrides)
	if err != nil {
		fmt.Fprintf(stderr, "kafka-server: invalid configuration in %s:\n%v\n", a.path, err)
		return 1
	}
	b, err := broker.New(cfg, logger, broker.WithSystemProperties(a.sysProps), broker.WithLogLevels(logLevels))
	if err != nil {
		fmt.Fprintf(stderr, "kafka-server: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := b.Startup(ctx); err != nil {
		logger.Error("fatal error during KafkaServer startup, prepare to shutdown", "err", err)
		b.Shutdown()
		return 1
	}
	logger.Info("started", "broker", b.BrokerID())
	select {
	case <-ctx.Done():
	case <-b.Halted():
		// Every log directory failed; the broker shut itself down.
		logger.Error("halting: all log directories have failed", "broker", b.BrokerID())
		b.Shutdown()
		return 1
	}
	logger.Info("shutting down on signal", "broker", b.BrokerID())
	b.Shutdown()
	logger.Info("shut down completed", "broker", b.BrokerID())
	return 0
}
