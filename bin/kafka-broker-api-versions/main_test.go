package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// TestVersionsText: NodeApiVersions.toString(true)'s lines for a broker
// range the client can use, one it cannot, an API the broker omits and a
// key the client does not know.
func TestVersionsText(t *testing.T) {
	produceMax := clientMax(0)
	got := versionsText([]kmsg.ApiVersionsResponseApiKey{
		{ApiKey: 18, MinVersion: 0, MaxVersion: 3},
		{ApiKey: 0, MinVersion: 0, MaxVersion: produceMax + 5},
		{ApiKey: 3, MinVersion: 200, MaxVersion: 300},
		{ApiKey: 9999, MinVersion: 1, MaxVersion: 1},
		{ApiKey: 60, MinVersion: 0, MaxVersion: 0},
	})
	lines := strings.Split(got, "\n")
	if lines[0] != "(" || lines[len(lines)-1] != ")" {
		t.Fatalf("frame:\n%s", got)
	}
	want := []string{
		fmt.Sprintf("\tProduce(0): 0 to %d [usable: %d],", produceMax+5, produceMax),
		"\tFetch(1): UNSUPPORTED,",
		"\tListOffsets(2): UNSUPPORTED,",
		"\tMetadata(3): 200 to 300 [unusable: node too new],",
		"\tApiVersions(18): 0 to 3 [usable: 3],",
		"\tDescribeCluster(60): 0 [usable: 0],",
		"\tUNKNOWN(9999): 1",
	}
	for _, w := range want {
		if !strings.Contains(got, w+"\n") {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "Vote(52)") {
		t.Errorf("a KRaft-only API listed as unsupported:\n%s", got)
	}
}

// TestAgainstBroker: the script as a process against a real broker; every
// API of the broker's ApiVersions answer is one line, with the broker's
// range and the version franz-go would use.
func TestAgainstBroker(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, c.Client())
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Script(t, nil, "kafka-broker-api-versions.sh", "--bootstrap-server", c.Addr(0))
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if want := c.Addr(0) + " (id: 1 rack: null) -> (\n"; !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "\n)\n") {
		t.Fatalf("frame, want %q first:\n%s", want, out)
	}
	for _, k := range resp.ApiKeys {
		r := fmt.Sprintf("%d to %d", k.MinVersion, k.MaxVersion)
		if k.MinVersion == k.MaxVersion {
			r = fmt.Sprint(k.MinVersion)
		}
		line := fmt.Sprintf("\t%s(%d): %s [usable: %d]", apiName(k.ApiKey), k.ApiKey, r, min(k.MaxVersion, clientMax(k.ApiKey)))
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + `,?$`).MatchString(out) {
			t.Errorf("missing %q in:\n%s", line, out)
		}
	}
	if !strings.Contains(out, "\tProduce(0): ") || !strings.Contains(out, "\tApiVersions(18): ") {
		t.Fatalf("output:\n%s", out)
	}

	// kafka-run-class.sh with Kafka's class name runs the same tool.
	viaClass, errOut, code := clitest.Script(t, nil, "kafka-run-class.sh", "kafka.admin.BrokerApiVersionsCommand", "--bootstrap-server", c.Addr(0))
	if code != 0 || errOut != "" || viaClass != out {
		t.Fatalf("kafka-run-class.sh kafka.admin.BrokerApiVersionsCommand: exit %d\n%s%s", code, viaClass, errOut)
	}

	out, errOut, code = clitest.Script(t, nil, "kafka-broker-api-versions.sh")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, helpText+"\nOption") {
		t.Fatalf("no arguments: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = clitest.Script(t, nil, "kafka-broker-api-versions.sh", "--command-config", "/nonexistent")
	if code != 1 || !strings.HasPrefix(errOut, "Missing required argument \"[bootstrap-server]\"\n") {
		t.Fatalf("no --bootstrap-server: exit %d\n%s%s", code, out, errOut)
	}
}

// TestRunClassNames: kafka-run-class.sh maps Kafka's class names to the
// tools and refuses a class it has no tool for, naming it.
func TestRunClassNames(t *testing.T) {
	out, errOut, code := clitest.Script(t, nil, "kafka-run-class.sh", "kafka.tools.NoSuchTool", "--help")
	if code != 1 || out != "" || errOut != "Error: Could not find or load main class kafka.tools.NoSuchTool\n"+
		"Caused by: java.lang.ClassNotFoundException: kafka.tools.NoSuchTool\n" {
		t.Fatalf("unknown class: exit %d\n%s%s", code, out, errOut)
	}
	for class, help := range map[string]string{
		"kafka.admin.ConfigCommand":   "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip\n",
		"kafka.admin.TopicCommand":    "This tool helps to create, delete, describe, or change a topic.\n",
		"kafka.tools.DumpLogSegments": "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.\n",
	} {
		out, errOut, _ := clitest.Script(t, nil, "kafka-run-class.sh", class, "--help")
		if !strings.HasPrefix(out+errOut, help) {
			t.Errorf("%s --help:\n%s%s", class, out, errOut)
		}
	}
}
