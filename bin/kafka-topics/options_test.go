package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestParseOptionsValid(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		check func(t *testing.T, o *topicOptions)
	}{
		{"create bootstrap", []string{"--bootstrap-server", "h:9092", "--create", "--topic", "t", "--partitions", "6", "--replication-factor", "3", "--config", "retention.ms=1000", "--config", " cleanup.policy = compact "},
			func(t *testing.T, o *topicOptions) {
				if o.action != actionCreate || o.bootstrapServer != "h:9092" || o.topic != "t" || o.partitions != 6 || o.replicationFact != 3 {
					t.Errorf("%+v", o)
				}
				if !reflect.DeepEqual(o.configs, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}) || !reflect.DeepEqual(o.configOrder, []string{"retention.ms", "cleanup.policy"}) {
					t.Errorf("configs %v %v", o.configs, o.configOrder)
				}
			}},
		{"create bootstrap without counts uses cluster defaults", []string{"--bootstrap-server=h:9092", "--create", "--topic=t"},
			func(t *testing.T, o *topicOptions) {
				if o.hasPartitions || o.hasReplication {
					t.Errorf("%+v", o)
				}
			}},
		{"create zookeeper with assignment", []string{"--zookeeper", "z:2181/k", "--create", "--topic", "t", "--replica-assignment", "0:1:2, 1:2:0 ,2:0:1", "--if-not-exists"},
			func(t *testing.T, o *topicOptions) {
				want := map[int32][]int32{0: {0, 1, 2}, 1: {1, 2, 0}, 2: {2, 0, 1}}
				if o.zookeeper != "z:2181/k" || !reflect.DeepEqual(o.replicaAssign, want) || !o.ifNotExists {
					t.Errorf("%+v", o)
				}
			}},
		{"list exclude internal", []string{"--list", "--exclude-internal", "--bootstrap-server", "h:1"},
			func(t *testing.T, o *topicOptions) {
				if o.action != actionList || !o.excludeInternal || o.hasTopic {
					t.Errorf("%+v", o)
				}
			}},
		{"describe filters", []string{"--describe", "--under-replicated-partitions", "--zookeeper", "z:1"},
			func(t *testing.T, o *topicOptions) {
				if !o.underReplicated || !o.reportFilter() {
					t.Errorf("%+v", o)
				}
			}},
		{"describe overrides", []string{"--describe", "--topics-with-overrides", "--bootstrap-server", "h:1"},
			func(t *testing.T, o *topicOptions) {
				if !o.withOverrides || o.reportFilter() {
					t.Errorf("%+v", o)
				}
			}},
		{"abbreviated options", []string{"--bootstrap", "h:1", "--desc", "--topic", "t", "--under-min"},
			func(t *testing.T, o *topicOptions) {
				if o.action != actionDescribe || o.topic != "t" || !o.underMinIsr {
					t.Errorf("%+v", o)
				}
			}},
		{"alter zookeeper configs", []string{"--zookeeper", "z:1", "--alter", "--topic", "t", "--config", "retention.ms=5", "--delete-config", "segment.ms"},
			func(t *testing.T, o *topicOptions) {
				if o.action != actionAlter || o.configs["retention.ms"] != "5" || !reflect.DeepEqual(o.deleteConfigs, []string{"segment.ms"}) {
					t.Errorf("%+v", o)
				}
			}},
		{"alter bootstrap partitions", []string{"--bootstrap-server", "h:1", "--alter", "--topic", "t", "--partitions", "9", "--if-exists"},
			func(t *testing.T, o *topicOptions) {
				if o.partitions != 9 || !o.ifExists {
					t.Errorf("%+v", o)
				}
			}},
		{"delete", []string{"--bootstrap-server", "h:1", "--delete", "--topic", "t.*"},
			func(t *testing.T, o *topicOptions) {
				if o.action != actionDelete || o.topic != "t.*" {
					t.Errorf("%+v", o)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, special, err := parseOptions(tc.args)
			if err != nil || special != "" {
				t.Fatalf("parseOptions(%q): %v %q", tc.args, err, special)
			}
			tc.check(t, o)
		})
	}
}

func TestParseOptionsErrors(t *testing.T) {
	cases := []struct {
		args  []string
		usage bool
		want  string
	}{
		{nil, true, "Create, delete, describe, or change a topic."},
		{[]string{"--bootstrap-server", "h:1"}, true, "exactly one action"},
		{[]string{"--list", "--create", "--bootstrap-server", "h:1"}, true, "exactly one action"},
		{[]string{"--list"}, false, "Only one of --bootstrap-server or --zookeeper must be specified"},
		{[]string{"--list", "--bootstrap-server", "h", "--zookeeper", "z"}, false, "Only one of --bootstrap-server or --zookeeper"},
		{[]string{"--create", "--bootstrap-server", "h:1"}, true, `Missing required argument "[topic]"`},
		{[]string{"--create", "--zookeeper", "z:1", "--topic", "t"}, true, `Missing required argument "[partitions, replication-factor]"`},
		{[]string{"--create", "--zookeeper", "z:1", "--topic", "t", "--partitions", "1"}, true, `"[replication-factor]"`},
		{[]string{"--alter", "--bootstrap-server", "h:1", "--topic", "t"}, true, `Missing required argument "[partitions]"`},
		{[]string{"--alter", "--bootstrap-server", "h:1", "--topic", "t", "--config", "a=b"}, true, "can't be used with option"},
		{[]string{"--list", "--bootstrap-server", "h:1", "--partitions", "3"}, true, `Option "[partitions]" can't be used with option "[list]"`},
		{[]string{"--describe", "--bootstrap-server", "h:1", "--if-not-exists"}, true, `Option "[if-not-exists]" can't be used with option "[describe]"`},
		{[]string{"--describe", "--zookeeper", "z:1", "--under-min-isr-partitions"}, true, `can't be used with option "[zookeeper]"`},
		{[]string{"--describe", "--bootstrap-server", "h:1", "--under-replicated-partitions", "--unavailable-partitions"}, true, "can't be used with option"},
		{[]string{"--describe", "--bootstrap-server", "h:1", "--if-exists"}, true, `Missing required argument "[topic]"`},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--replica-assignment", "0:1", "--partitions", "1"}, true, `"[replica-assignment]" can't be used with option "[partitions]"`},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--partitions", "0"}, false, "The partitions must be greater than 0"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--replication-factor", "40000"}, false, "The replication factor must be between 1 and 32767 inclusive"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--partitions", "x"}, true, "Cannot parse argument 'x' of option partitions"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--config", "a=b=c"}, false, `Invalid topic config: all configs to be added must be in the format "key=val".`},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--config", "nope=1"}, false, "Unknown topic config name: nope"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--config", "segment.bytes=1"}, false, "Invalid value 1 for configuration segment.bytes"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--replica-assignment", "0:0"}, false, "Partition replica lists may not contain duplicate entries: 0"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--replica-assignment", "0:1,2"}, false, "Partition 1 has different replication factor: 2"},
		{[]string{"--create", "--bootstrap-server", "h:1", "--topic", "t", "--replica-assignment", "0:a"}, false, `For input string: "a"`},
		{[]string{"--alter", "--zookeeper", "z:1", "--topic", "t", "--delete-config", "nope"}, false, "Unknown topic config name: nope"},
		{[]string{"--list", "--bootstrap-server"}, true, "Option bootstrap-server requires an argument"},
		{[]string{"--list", "--bogus", "--bootstrap-server", "h"}, true, "bogus is not a recognized option"},
		{[]string{"--list", "--un", "--bootstrap-server", "h"}, true, "ambiguous"},
		{[]string{"list"}, true, "non-option argument 'list'"},
		{[]string{"--list=yes", "--bootstrap-server", "h"}, true, "does not take an argument"},
		{[]string{"--list", "--bootstrap-server", "h", "--topic", "a", "--topic", "b"}, true, "Found multiple arguments for option topic, but you asked for only one"},
	}
	for _, tc := range cases {
		_, _, err := parseOptions(tc.args)
		if err == nil {
			t.Errorf("parseOptions(%q) succeeded, want %q", tc.args, tc.want)
			continue
		}
		var ue *admintool.UsageError
		if isUsage := errors.As(err, &ue); isUsage != tc.usage {
			t.Errorf("parseOptions(%q): usage error = %v, want %v (%v)", tc.args, isUsage, tc.usage, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseOptions(%q) = %q, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "--bootstrap-server <server to connect to>") || !strings.Contains(out.String(), "--replica-assignment <broker_id_for_part1_replica1") {
		t.Errorf("--help: code %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--version"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Klassik") {
		t.Errorf("--version: code %d %q", code, out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"--list"}, &out, &errOut); code != 1 || out.String() != "Error while executing topic command : Only one of --bootstrap-server or --zookeeper must be specified\n" {
		t.Errorf("missing server: code %d %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--nope"}, &out, &errOut); code != 1 || !strings.HasPrefix(errOut.String(), "nope is not a recognized option\nOption") {
		t.Errorf("bad option: code %d %q", code, errOut.String())
	}
}

func TestCommandConfig(t *testing.T) {
	p := t.TempDir() + "/admin.properties"
	if err := os.WriteFile(p, []byte("client.id=ops\nrequest.timeout.ms=5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _, err := parseOptions([]string{"--bootstrap-server", "127.0.0.1:1", "--list", "--command-config", p})
	if err != nil {
		t.Fatal(err)
	}
	if o.commandConfig["client.id"] != "ops" || o.commandConfig["request.timeout.ms"] != "5000" {
		t.Errorf("command config %v", o.commandConfig)
	}
	s, err := newAdminService(o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if s.timeout != 5*time.Second {
		t.Errorf("request.timeout.ms not applied: %v", s.timeout)
	}
	if _, _, err := parseOptions([]string{"--bootstrap-server", "h:1", "--list", "--command-config", p + ".missing"}); err == nil {
		t.Errorf("missing command config accepted")
	}
}

func TestStripKerr(t *testing.T) {
	err := fmt.Errorf("%w: replication factor: 3 larger than available brokers: 1", kerr.InvalidReplicationFactor)
	if got := stripKerr(err); got != "Replication factor: 3 larger than available brokers: 1." {
		t.Errorf("stripKerr = %q", got)
	}
	if got := stripKerr(errors.New("plain")); got != "Plain." {
		t.Errorf("stripKerr plain = %q", got)
	}
}
