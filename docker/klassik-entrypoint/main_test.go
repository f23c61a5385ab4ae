package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klassik/klassik/config"
)

// cp-kafka's naming rule: strip KAFKA_, lower-case, "___" -> "-",
// "__" -> "_", "_" -> ".".
func TestPropertyName(t *testing.T) {
	cases := []struct {
		env, key string
		ok       bool
	}{
		{"KAFKA_ZOOKEEPER_CONNECT", "zookeeper.connect", true},
		{"KAFKA_BROKER_ID", "broker.id", true},
		{"KAFKA_BROKER_RACK", "broker.rack", true},
		{"KAFKA_ADVERTISED_LISTENERS", "advertised.listeners", true},
		{"KAFKA_LOG_DIRS", "log.dirs", true},
		{"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "offsets.topic.replication.factor", true},
		{"KAFKA_KLASSIK_HTTP_LISTENER", "klassik.http.listener", true},
		{"KAFKA_LISTENER_NAME_INTERNAL_SSL__KEY_PASSWORD", "listener.name.internal.ssl_key.password", true},
		{"KAFKA_A___B", "a-b", true},
		{"KAFKA_A____B", "a-.b", true},
		{"KAFKA_CFG_ZOOKEEPER_CONNECT", "zookeeper.connect", true}, // bitnami
		{"KAFKA_HEAP_OPTS", "", false},
		{"KAFKA_OPTS", "", false},
		{"KAFKA_", "", false},
		{"ZOOKEEPER_CONNECT", "", false},
		{"KLASSIK_CONFIG", "", false},
	}
	for _, c := range cases {
		key, ok := propertyName(c.env)
		if key != c.key || ok != c.ok {
			t.Errorf("propertyName(%q) = %q, %v; want %q, %v", c.env, key, ok, c.key, c.ok)
		}
		if ok && !strings.Contains(c.env, "CFG_") && !strings.Contains(c.env, "____") && "KAFKA_"+envName(key) != c.env {
			t.Errorf("envName(%q) = %q; want %q", key, envName(key), c.env)
		}
	}
}

func TestFromEnvDefaults(t *testing.T) {
	props, source, err := fromEnv([]string{
		"PATH=/bin",
		"KAFKA_ZOOKEEPER_CONNECT=zoo1:2181/klassik",
		"KAFKA_ADVERTISED_LISTENERS=INTERNAL://broker1:29092,EXTERNAL://localhost:9092",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
		"KAFKA_INTER_BROKER_LISTENER_NAME=INTERNAL",
		"KAFKA_HEAP_OPTS=-Xmx1G",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := props["listeners"]; got != "INTERNAL://0.0.0.0:29092,EXTERNAL://0.0.0.0:9092" {
		t.Errorf("listeners = %q", got)
	}
	if got := props["log.dirs"]; got != defaultLogDirs {
		t.Errorf("log.dirs = %q", got)
	}
	if _, ok := props["heap.opts"]; ok {
		t.Error("KAFKA_HEAP_OPTS became a property")
	}
	if err := check(props, source); err != nil {
		t.Errorf("check: %v", err)
	}
}

func TestFromEnvDuplicate(t *testing.T) {
	_, _, err := fromEnv([]string{"KAFKA_BROKER_ID=1", "KAFKA_CFG_BROKER_ID=2"})
	if err == nil || !strings.Contains(err.Error(), "KAFKA_BROKER_ID and KAFKA_CFG_BROKER_ID both set broker.id") {
		t.Fatalf("err = %v", err)
	}
}

// The broker refuses unknown properties; the entrypoint refuses them before
// it starts, naming the variable.
func TestUnknownKeyRefused(t *testing.T) {
	var stderr bytes.Buffer
	code := run(nil, []string{
		"KAFKA_ZOOKEEPER_CONNECT=127.0.0.1:2181",
		"KAFKA_NO_SUCH_SETTING=1",
		"KLASSIK_CONFIG=" + t.TempDir() + "/server.properties",
		"KLASSIK_SERVER=/nonexistent",
	}, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no.such.setting (from KAFKA_NO_SUCH_SETTING): unknown configuration") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

func TestMissingZooKeeperNamesVariable(t *testing.T) {
	var stderr bytes.Buffer
	code := run(nil, []string{"KLASSIK_CONFIG=" + t.TempDir() + "/s.properties"}, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "KAFKA_ZOOKEEPER_CONNECT") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

// The written file reads back, through the broker's parser, as the same
// properties, whatever the values contain.
func TestWriteRoundTrip(t *testing.T) {
	props := map[string]string{
		"zookeeper.connect": "a:1,b:2/chroot",
		"x.backslash":       `C:\dir\n`,
		"x.lead":            "  two spaces",
		"x.newline":         "a\nb",
		"x.equals":          "k=v:w # not a comment",
		"x.empty":           "",
		"x.unicode":         "zürich",
	}
	var buf bytes.Buffer
	if err := write(&buf, props, map[string]string{"zookeeper.connect": "KAFKA_ZOOKEEPER_CONNECT"}); err != nil {
		t.Fatal(err)
	}
	got, err := config.ParseProperties(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(props) {
		t.Errorf("read back %d keys, want %d: %v", len(got), len(props), got)
	}
	for k, v := range props {
		if got[k] != v {
			t.Errorf("%s: read back %q, want %q", k, got[k], v)
		}
	}
}
