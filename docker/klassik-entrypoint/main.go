// Command klassik-entrypoint starts a Klassik broker in a container the way
// the common Kafka images do (confluentinc/cp-kafka, bitnami/kafka): every
// KAFKA_* environment variable becomes a server.properties key, the file is
// written, and the process becomes bin/kafka-server (exec, so the broker is
// the container's main process and receives docker stop's SIGTERM).
//
// Names follow cp-kafka's rule: strip KAFKA_ (or bitnami's KAFKA_CFG_),
// lower-case, then "___" is "-", "__" is "_" and "_" is ".":
//
//	KAFKA_ZOOKEEPER_CONNECT              zookeeper.connect
//	KAFKA_BROKER_ID                      broker.id
//	KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR  offsets.topic.replication.factor
//	KAFKA_KLASSIK_HTTP_LISTENER          klassik.http.listener
//
// The JVM and image-launcher variables cp-kafka excludes (KAFKA_HEAP_OPTS,
// KAFKA_OPTS, KAFKA_JMX_OPTS, ...) are not properties and are skipped. The
// result is checked with the broker's own strict configuration loader before
// the broker starts, so an unknown or invalid key stops the container at once
// with the variable that set it named.
//
// Defaults, as cp-kafka applies them: log.dirs is /var/lib/klassik/data, and
// when KAFKA_LISTENERS is unset the listeners are the advertised listeners
// bound on every interface (PLAINTEXT://broker1:9092 listens on
// PLAINTEXT://0.0.0.0:9092).
//
// Usage (the image's ENTRYPOINT):
//
//	klassik-entrypoint [--override key=value]...   configure and exec kafka-server
//	klassik-entrypoint --check                      print the properties the environment gives, or its problems
//	klassik-entrypoint <command> [args...]         exec another command (a tool)
//
// KLASSIK_CONFIG names the generated file (default
// /var/lib/klassik/server.properties); KLASSIK_SERVER the broker binary
// (default kafka-server beside this one).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/klassik/klassik/config"
)

const (
	defaultConfigPath = "/var/lib/klassik/server.properties"
	defaultLogDirs    = "/var/lib/klassik/data"
)

// notProperties are KAFKA_ variables that configure a JVM or an image's
// launcher script rather than the broker; cp-kafka's template excludes the
// same names. Klassik is no JVM, so they have nothing to set.
var notProperties = map[string]bool{
	"KAFKA_VERSION":                      true,
	"KAFKA_HOME":                         true,
	"KAFKA_HEAP_OPTS":                    true,
	"KAFKA_OPTS":                         true,
	"KAFKA_JMX_OPTS":                     true,
	"KAFKA_JMX_PORT":                     true,
	"KAFKA_JMX_HOSTNAME":                 true,
	"KAFKA_JVM_PERFORMANCE_OPTS":         true,
	"KAFKA_GC_LOG_OPTS":                  true,
	"KAFKA_LOG4J_OPTS":                   true,
	"KAFKA_LOG4J_ROOT_LOGLEVEL":          true,
	"KAFKA_LOG4J_LOGGERS":                true,
	"KAFKA_TOOLS_LOG4J_LOGLEVEL":         true,
	"KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET": true,
	"KAFKA_DEBUG":                        true,
}

// propertyName maps one environment variable name to a property key, or
// returns ok=false for a variable that is not a broker property.
func propertyName(env string) (string, bool) {
	if notProperties[env] {
		return "", false
	}
	var raw string
	switch {
	case strings.HasPrefix(env, "KAFKA_CFG_"):
		raw = strings.TrimPrefix(env, "KAFKA_CFG_")
	case strings.HasPrefix(env, "KAFKA_"):
		raw = strings.TrimPrefix(env, "KAFKA_")
	default:
		return "", false
	}
	if raw == "" {
		return "", false
	}
	name := strings.ToLower(raw)
	name = strings.ReplaceAll(name, "___", "\x00")
	name = strings.ReplaceAll(name, "__", "\x01")
	name = strings.ReplaceAll(name, "_", ".")
	name = strings.ReplaceAll(name, "\x00", "-")
	name = strings.ReplaceAll(name, "\x01", "_")
	return name, true
}

// fromEnv returns the properties the environment sets and, for each key,
// the variable that set it. Two variables naming the same key (KAFKA_X and
// KAFKA_CFG_X) are an error: which one wins would be a guess.
func fromEnv(environ []string) (props, source map[string]string, err error) {
	props, source = map[string]string{}, map[string]string{}
	var problems []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		key, ok := propertyName(name)
		if !ok {
			continue
		}
		if prev, dup := source[key]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s both set %s", prev, name, key))
			continue
		}
		props[key] = value
		source[key] = name
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, nil, errors.New(strings.Join(problems, "\n"))
	}
	if _, ok := props["log.dirs"]; !ok {
		if _, ok := props["log.dir"]; !ok {
			props["log.dirs"] = defaultLogDirs
		}
	}
	if _, ok := props["listeners"]; !ok {
		if adv, ok := props["advertised.listeners"]; ok {
			l, err := bindAll(adv)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", source["advertised.listeners"], err)
			}
			props["listeners"] = l
			source["listeners"] = source["advertised.listeners"] + " (KAFKA_LISTENERS unset)"
		}
	}
	return props, source, nil
}

// bindAll turns advertised listeners into listeners on every interface:
// each NAME://host:port becomes NAME://0.0.0.0:port, as cp-kafka derives
// KAFKA_LISTENERS.
func bindAll(advertised string) (string, error) {
	var out []string
	for _, l := range config.SplitList(advertised) {
		name, addr, ok := strings.Cut(l, "://")
		i := strings.LastIndex(addr, ":")
		if !ok || i < 0 {
			return "", fmt.Errorf("listener %q: expected NAME://host:port", l)
		}
		out = append(out, name+"://0.0.0.0"+addr[i:])
	}
	return strings.Join(out, ","), nil
}

// check loads the properties with the broker's loader and rewrites its
// problems to name the environment variable behind each key.
func check(props, source map[string]string) error {
	_, err := config.FromMap(props)
	if err == nil {
		return nil
	}
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var b strings.Builder
	for _, p := range ve.Problems {
		if env, ok := source[p.Key]; ok {
			fmt.Fprintf(&b, "  %s (from %s): %s\n", p.Key, env, p.Msg)
		} else if p.Key != "" {
			fmt.Fprintf(&b, "  %s (set KAFKA_%s): %s\n", p.Key, envName(p.Key), p.Msg)
		} else {
			fmt.Fprintf(&b, "  %s\n", p.Msg)
		}
	}
	return errors.New(strings.TrimRight(b.String(), "\n"))
}

// envName is propertyName backwards, for messages: zookeeper.connect is
// ZOOKEEPER_CONNECT.
func envName(key string) string {
	s := strings.ReplaceAll(key, "_", "__")
	s = strings.ReplaceAll(s, "-", "___")
	s = strings.ReplaceAll(s, ".", "_")
	return strings.ToUpper(s)
}

// write renders props as a Java properties file, sorted by key.
func write(w io.Writer, props, source map[string]string) error {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintln(w, "# Written by klassik-entrypoint from the container's KAFKA_* environment")
	fmt.Fprintln(w, "# at start-up; it is rewritten at every start, so edit the environment instead.")
	for _, k := range keys {
		if env, ok := source[k]; ok {
			fmt.Fprintf(w, "# %s\n", env)
		}
		if _, err := fmt.Fprintf(w, "%s=%s\n", k, escapeValue(props[k])); err != nil {
			return err
		}
	}
	return nil
}

// escapeValue escapes what the properties syntax would otherwise change:
// backslashes, line breaks and leading blanks.
func escapeValue(v string) string {
	var b strings.Builder
	for i, r := range v {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case i == 0 && (r == ' ' || r == '\t' || r == '\f'):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// run returns only on failure; on success it execs the broker or command.
func run(args, environ []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		path, err := exec.LookPath(args[0])
		if err != nil {
			fmt.Fprintf(stderr, "klassik-entrypoint: %v\n", err)
			return 127
		}
		err = syscall.Exec(path, args, environ)
		fmt.Fprintf(stderr, "klassik-entrypoint: exec %s: %v\n", path, err)
		return 126
	}
	props, source, err := fromEnv(environ)
	if err == nil {
		err = check(props, source)
	}
	if err != nil {
		fmt.Fprintf(stderr, "klassik-entrypoint: the broker configuration from the environment is invalid:\n%v\n", err)
		return 1
	}
	if len(args) == 1 && args[0] == "--check" {
		if err := write(stdout, props, source); err != nil {
			fmt.Fprintf(stderr, "klassik-entrypoint: %v\n", err)
			return 1
		}
		return 0
	}
	path := lookup(environ, "KLASSIK_CONFIG", defaultConfigPath)
	if err := writeFile(path, props, source); err != nil {
		fmt.Fprintf(stderr, "klassik-entrypoint: %v\n", err)
		return 1
	}
	server := lookup(environ, "KLASSIK_SERVER", "")
	if server == "" {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "klassik-entrypoint: %v\n", err)
			return 1
		}
		server = filepath.Join(filepath.Dir(self), "kafka-server")
	}
	argv := append([]string{server, path}, args...)
	err = syscall.Exec(server, argv, environ)
	fmt.Fprintf(stderr, "klassik-entrypoint: exec %s: %v\n", server, err)
	return 126
}

func writeFile(path string, props, source map[string]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, props, source); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func lookup(environ []string, name, def string) string {
	for _, kv := range slices.Backward(environ) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return def
}
