package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseArgsSystemProperties(t *testing.T) {
	a, err := parseArgs([]string{"-Djava.security.auth.login.config=/etc/kafka/jaas.conf", "-Dempty=", "s.properties", "--override", "broker.id=1"})
	if err != nil || a.path != "s.properties" || a.sysProps["java.security.auth.login.config"] != "/etc/kafka/jaas.conf" ||
		a.sysProps["empty"] != "" || len(a.sysProps) != 2 || a.overrides["broker.id"] != "1" {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := parseArgs([]string{"-D=x", "s.properties"}); err == nil || !strings.Contains(err.Error(), "-Dname=value") {
		t.Fatalf("-D=x: %v", err)
	}
}

// kafka-server-start.sh hands the -D system properties of KAFKA_OPTS to the
// broker (other JVM flags are dropped): the JAAS file named there is the
// one the broker reads, so a missing file stops it, named in the error.
func TestStartScriptPassesKafkaOptsJaasFile(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	jaas := filepath.Join(t.TempDir(), "no_such_jaas.conf")
	props := writeProps(t, "broker.id=1", "zookeeper.connect=127.0.0.1:1", "log.dirs="+t.TempDir(),
		"listeners=SASL_PLAINTEXT://127.0.0.1:0", "security.inter.broker.protocol=SASL_PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.inter.broker.protocol=PLAIN")
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "bin", "kafka-server-start.sh"), props)
	cmd.Env = append(cmd.Environ(), "KAFKA_OPTS=-Xmx1G -XX:+UseG1GC -Djava.security.auth.login.config="+jaas+" -Dzookeeper.sasl.client=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kafka-server-start.sh did not finish: %s", out.String())
	}
	if err == nil || !strings.Contains(out.String(), jaas) || !strings.Contains(out.String(), "java.security.auth.login.config") {
		t.Fatalf("want a start-up error naming %s; got %v:\n%s", jaas, err, out.String())
	}
}
