package config

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../server.properties.example from the key table")

// renderExample produces server.properties.example: every implemented key,
// grouped, commented out at Kafka's default, with a one-line description.
func renderExample() []byte {
	var b bytes.Buffer
	b.WriteString(`# Klassik broker configuration: every supported key with Kafka's default.
#
# The file uses Kafka's server.properties syntax (key=value, '#' or '!' starts
# a comment, a trailing backslash continues a line). The same keys may be
# written in YAML in a file ending in .yaml or .yml. Keys that are commented
# out take the default shown. An unknown key stops the broker at start-up;
# Kafka keys that Klassik does not implement (listed at the end) are accepted
# and reported in a warning.
#
# This file is generated from config/keys.go (go test ./config -update).
`)
	group := ""
	for _, k := range BrokerKeys() {
		if k.Group != group {
			group = k.Group
			fmt.Fprintf(&b, "\n############################# %s #############################\n", group)
		}
		def := k.Default
		note := "default: " + def
		if k.Nullable && def == "" {
			note = "no default"
		} else if def == "" {
			note = "default: empty"
		}
		fmt.Fprintf(&b, "\n# %s (%s; %s)\n", k.Doc, k.Type, note)
		if k.Name == "zookeeper.connect" {
			b.WriteString("zookeeper.connect=localhost:2181\n")
			continue
		}
		fmt.Fprintf(&b, "#%s=%s\n", k.Name, def)
	}
	b.WriteString("\n############################# Accepted but ignored #############################\n\n")
	b.WriteString("# These Kafka 2.8 broker keys (and every listener.name.<listener>.<key>) are\n")
	b.WriteString("# accepted so that a Kafka server.properties loads, but they have no effect:\n")
	line := "#"
	for _, k := range KafkaOnlyKeys() {
		if len(line)+len(k)+1 > 79 {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + k
	}
	b.WriteString(line + "\n")
	return b.Bytes()
}

func TestExampleUpToDate(t *testing.T) {
	want := renderExample()
	if *update {
		if err := os.WriteFile("../server.properties.example", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("../server.properties.example")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("server.properties.example is stale; run go test ./config -update")
	}
	if !strings.Contains(string(got), "#log.retention.hours=168\n") {
		t.Errorf("example lacks a default line")
	}
}
