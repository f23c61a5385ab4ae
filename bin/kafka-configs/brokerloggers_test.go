package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/testcluster"
)

// TestBrokerLoggers: kafka-configs.sh --broker-logger describes the
// broker's loggers with their effective levels, sets and unsets levels at
// run time through IncrementalAlterConfigs, and answers Kafka's errors;
// AlterConfigs refuses the resource type.
func TestBrokerLoggers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	bs := strings.Join(c.Bootstrap(), ",")
	reg := c.Broker(0).LogLevels()
	describe := func() string {
		levels := reg.Loggers()
		out := "Dynamic configs for broker-logger 1 are:\n"
		for _, n := range slices.Sorted(maps.Keys(levels)) {
			out += "  " + n + "=" + levels[n] + " sensitive=false synonyms={}\n"
		}
		return out
	}
	root := reg.Loggers()["root"]
	if reg.Loggers()["kafka.controller.KafkaController"] != root || reg.Loggers()["kafka.server.KafkaApis"] != root {
		t.Fatalf("the components inherit root's level: %v", reg.Loggers())
	}
	kc(t, 0, describe(), "", "--bootstrap-server", bs, "--describe", "--broker-logger", "1")

	kc(t, 0, "Completed updating config for broker-logger 1.\n", "",
		"--bootstrap-server", bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
		"--add-config", "kafka.controller=TRACE,kafka.server.KafkaApis=ERROR")
	if l := reg.Loggers(); l["kafka.controller.KafkaController"] != "TRACE" || l["kafka.server.KafkaApis"] != "ERROR" || l["root"] != root {
		t.Fatalf("after SET: %v", l)
	}
	kc(t, 0, describe(), "", "--bootstrap-server", bs, "--describe", "--broker-logger", "1")
	kc(t, 0, "Completed updating config for broker-logger 1.\n", "",
		"--bootstrap-server", bs, "--alter", "--broker-logger", "1", "--delete-config", "kafka.controller")
	if l := reg.Loggers(); l["kafka.controller.KafkaController"] != root || l["kafka.server.KafkaApis"] != "ERROR" {
		t.Fatalf("after DELETE: %v", l)
	}

	kc(t, 1, "", "Invalid broker logger(s): no.such.logger\n",
		"--bootstrap-server", bs, "--alter", "--broker-logger", "1", "--add-config", "no.such.logger=INFO")
	bad := []string{"--bootstrap-server", bs, "--alter", "--broker-logger", "1", "--add-config", "kafka=LOUD"}
	kc(t, 1, "", "Error while executing config command with args '"+strings.Join(bad, " ")+"'\n"+
		"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidRequestException: Invalid config value for resource ConfigResource(type=BROKER_LOGGER, name='1'): "+
		"Cannot set the log level of kafka to LOUD as it is not a supported log level. Valid log levels are TRACE, ERROR, INFO, FATAL, DEBUG, WARN\n", bad...)
	rootDel := []string{"--bootstrap-server", bs, "--alter", "--broker-logger", "1", "--delete-config", "root"}
	kc(t, 1, "", "Error while executing config command with args '"+strings.Join(rootDel, " ")+"'\n"+
		"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.InvalidRequestException: Removing the log level of the root logger is not allowed\n", rootDel...)
	kc(t, 1, "", "Invalid entity type broker-loggers, the entity type must be one of topics,clients,users,brokers,ips with the --zookeeper argument\n",
		"--zookeeper", c.ZKConnect(), "--describe", "--broker-logger", "1")

	// The APIs directly: an unknown logger, another broker's id, and the
	// legacy AlterConfigs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inc := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, name := range []string{"", "7"} {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, name
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := "DEBUG"
		cfg.Name, cfg.Value = "ghost", &v
		r.Configs = append(r.Configs, cfg)
		inc.Resources = append(inc.Resources, r)
	}
	raw, err := c.Client().Broker(1).Request(ctx, inc)
	if err != nil {
		t.Fatal(err)
	}
	resp := raw.(*kmsg.IncrementalAlterConfigsResponse)
	want := map[string]string{
		"":  "Invalid config value for resource ConfigResource(type=BROKER_LOGGER, name=''): Logger ghost does not exist!",
		"7": "Unexpected broker id, expected 1, but received 7",
	}
	for _, r := range resp.Resources {
		if r.ErrorCode != 42 || r.ErrorMessage == nil || *r.ErrorMessage != want[r.ResourceName] {
			t.Errorf("IncrementalAlterConfigs %q: %d %v, want 42 %q", r.ResourceName, r.ErrorCode, r.ErrorMessage, want[r.ResourceName])
		}
	}
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
	legacy.Resources = append(legacy.Resources, lr)
	lresp, err := legacy.RequestWith(ctx, c.Client())
	if err != nil {
		t.Fatal(err)
	}
	if r := lresp.Resources[0]; r.ErrorCode != 42 || r.ErrorMessage == nil ||
		*r.ErrorMessage != "AlterConfigs is only supported for topics and brokers, but resource type is BROKER_LOGGER" {
		t.Errorf("AlterConfigs BROKER_LOGGER: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	if reg.Loggers()["kafka.server.KafkaApis"] != "ERROR" || reg.Exists("ghost") {
		t.Fatalf("a refused request changed the loggers: %v", reg.Loggers())
	}
}
