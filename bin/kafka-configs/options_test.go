package main

import (
	"io"
	"maps"
	"slices"
	"testing"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

func TestParseOptions(t *testing.T) {
	zk := []string{"--zookeeper", "localhost:2181"}
	bs := []string{"--bootstrap-server", "localhost:9092"}
	with := func(base []string, rest ...string) []string { return append(slices.Clone(base), rest...) }
	clitest.CheckParse(t, parseOptions, []clitest.ParseCase{
		{Args: with(zk, "--entity-type", "users"), Err: "Command must include exactly one action: --describe, --alter", Usage: true},
		{Args: with(zk, "--describe", "--alter", "--entity-type", "users"), Err: "Command must include exactly one action: --describe, --alter", Usage: true},
		{Args: with(zk, "--describe", "--entity-type", "users", "--delete-config", "x"), Err: `Option "[describe]" can't be used with option "[delete-config]"`, Usage: true},
		{Args: with(zk, "--describe", "--entity-type", "users", "--entity-type", "users"), Err: "Duplicate entity type(s) specified: users"},
		{Args: with(zk, "--describe", "--entity-type", "broker-loggers"), Err: "Invalid entity type broker-loggers, the entity type must be one of topics,clients,users,brokers,ips with the --zookeeper argument"},
		{Args: with(bs, "--describe", "--entity-type", "groups"), Err: "Invalid entity type groups, the entity type must be one of topics,clients,users,brokers,ips,broker-loggers with the --bootstrap-server argument"},
		{Args: with(zk, "--describe"), Err: "At least one entity type must be specified"},
		{Args: with(zk, "--describe", "--entity-type", "users", "--entity-type", "topics"), Err: "Only 'users' and 'clients' entity types may be specified together"},
		{Args: with(zk, "--describe", "--entity-type", "users", "--topic", "t"), Err: "Only 'users' and 'clients' entity types may be specified together"},
		{Args: with(zk, "--describe", "--entity-name", "x", "--topic", "t"), Err: "--entity-{type,name,default} should not be used in conjunction with specific entity flags"},
		{Args: []string{"--describe", "--entity-type", "users"}, Err: "One of the required --bootstrap-server or --zookeeper arguments must be specified"},
		{Args: with(with(zk, bs...), "--describe", "--entity-type", "users"), Err: "Only one of --bootstrap-server or --zookeeper must be specified"},
		{Args: with(zk, "--describe", "--all", "--entity-type", "topics"), Err: "--bootstrap-server must be specified for --all"},
		{Args: with(zk, "--alter", "--entity-type", "users", "--add-config", "a=b"), Err: "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips"},
		{Args: with(zk, "--alter", "--entity-type", "topics", "--add-config", "a=b"), Err: "an entity name must be specified with --alter of topics"},
		{Args: with(zk, "--alter", "--topic", "t", "--add-config", "a=b", "--add-config-file", "f"), Err: "Only one of --add-config or --add-config-file must be specified"},
		{Args: with(zk, "--alter", "--topic", "t"), Err: "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"},
		{Args: with(zk, "--describe", "--entity-type", "clients")},
		{Args: with(zk, "--describe", "--user-defaults")},
		{Args: with(zk, "--describe", "--entity-type", "brokers", "--entity-name", "x1"), Err: "The entity name for brokers must be a valid integer broker id, but it is: x1"},
		{Args: with(bs, "--describe", "--broker-logger", "b"), Err: "The entity name for broker-loggers must be a valid integer broker id, but it is: b"},
		{Args: with(bs, "--describe", "--entity-type", "broker-loggers"), Err: "an entity name must be specified with --describe of broker-loggers"},
		{Args: with(zk, "--describe", "--ip", "1.2.3.x.invalid"), Err: "The entity name for ips must be a valid IP or resolvable host, but it is: 1.2.3.x.invalid"},
		{Args: with(zk, "--alter", "--ip-defaults", "--add-config", "connection_creation_rate=3")},
		{Args: with(bs, "--alter", "--user", "u", "--client", "c", "--add-config", "producer_byte_rate=3")},
		{Args: with(zk, "--describe", "--entity-type", "users")},
		{Args: with(bs, "--describe", "--entity-type", "topics", "--all")},
		{Args: with(zk, "--alter", "--entity-type", "users", "--entity-name", "a", "--delete-config", "SCRAM-SHA-256")},
		{Args: with(zk, "--describe", "--entity", "users"), Err: "Option 'entity' is ambiguous; possibilities: entity-default, entity-name, entity-type", Usage: true},
	})
}

func TestEntityNamesInCommandLineOrder(t *testing.T) {
	args := []string{"--zookeeper", "z", "--describe", "--entity-type", "users", "--entity-name=a", "--entity-type", "clients", "--entity-default"}
	p, _, err := admintool.ParseCommandWith(specs, args, helpText, admintool.Rules{Abbreviations: true, SingleValued: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := entityNames(args, p); !slices.Equal(got, []string{"a", ""}) {
		t.Errorf("names %q", got)
	}
	args = []string{"--zookeeper", "z", "--describe", "--entity-d", "--entity-n", "b", "--user", "u"}
	p, _, _ = admintool.ParseCommandWith(specs, args, helpText, admintool.Rules{Abbreviations: true, SingleValued: true})
	if got := entityNames(args, p); !slices.Equal(got, []string{"", "b", "u"}) {
		t.Errorf("names %q", got)
	}
}

func TestConfigsToBeAdded(t *testing.T) {
	parse := func(v string) (map[string]string, error) {
		p, _, err := admintool.ParseCommandWith(specs, []string{"--add-config", v}, helpText, admintool.Rules{Abbreviations: true, SingleValued: true})
		if err != nil {
			return nil, err
		}
		return configsToBeAdded(p, io.Discard)
	}
	for in, want := range map[string]map[string]string{
		"SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]": {
			"SCRAM-SHA-256": "iterations=8192,password=alice-secret", "SCRAM-SHA-512": "password=alice-secret"},
		"k1=v1, k2 = [a,b,c] ,k3=":       {"k1": "v1", "k2": "a,b,c", "k3": ""},
		"SCRAM-SHA-256=[password=p=w,d]": {"SCRAM-SHA-256": "password=p=w,d"},
		"a=b,a=c":                        {"a": "c"},
	} {
		got, err := parse(in)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"a", "a=b=c", "SCRAM-SHA-256=password=x", "a=b,,c=d"} {
		if got, err := parse(in); err == nil {
			t.Errorf("%q accepted: %v", in, got)
		}
	}
}

func TestParseCredentialValue(t *testing.T) {
	type want struct {
		iter int
		pw   string
		err  string
	}
	for _, c := range []struct {
		re       string
		in       string
		minusOne bool
		want     want
	}{
		{"zk", "iterations=8192,password=a,b=c", false, want{8192, "a,b=c", ""}},
		{"zk", "password=", false, want{4096, "", ""}},
		{"zk", "iterations=,password=x", false, want{0, "", `For input string: ""`}},
		{"zk", "iterations=-1,password=x", false, want{0, "", "Invalid credential property M=iterations=-1,password=x"}},
		{"admin", "iterations=-1,password=x", true, want{4096, "x", ""}},
		{"admin", "iterations=99999999999,password=x", true, want{0, "", `For input string: "99999999999"`}},
		{"zk", "iterations=4095,password=x", false, want{0, "", "Iterations 4095 is less than the minimum 4096 required for M"}},
		{"zk", "secret", false, want{0, "", "Invalid credential property M=secret"}},
	} {
		re := zkCredentialRE
		if c.re == "admin" {
			re = adminCredentialRE
		}
		iter, pw, err := parseCredentialValue(re, "M", c.in, c.minusOne)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if iter != c.want.iter || pw != c.want.pw || msg != c.want.err {
			t.Errorf("%s %q: %d %q %q, want %+v", c.re, c.in, iter, pw, msg, c.want)
		}
	}
}

// FuzzCommandLine: parsing never panics; an accepted line has a known
// entity type and one action.
func FuzzCommandLine(f *testing.F) {
	clitest.FuzzCommandLines(f, parseOptions, []string{
		"--zookeeper z --alter --entity-type users --entity-name a --add-config SCRAM-SHA-256=[password=x]",
		"--bootstrap-server b --describe --entity-type topics --all",
		"--zookeeper z --describe --user u --entity-default",
		"--zookeeper z --alter --topic t --delete-config a,b --delete-config c",
	}, func(t *testing.T, line string, o *options) {
		if len(o.types) == 0 || !slices.Contains(bootstrapTypes, o.types[0]) {
			t.Fatalf("%q accepted with types %v", line, o.types)
		}
		if _, err := configsToBeAdded(o.p, io.Discard); err != nil {
			return
		}
		_ = configsToBeDeleted(o.p)
	})
}
