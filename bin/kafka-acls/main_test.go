package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

func TestUsageErrors(t *testing.T) {
	zk := []string{"--authorizer-properties", "zookeeper.connect=localhost:2181"}
	with := func(extra ...string) []string { return append(append([]string{}, zk...), extra...) }
	clitest.CheckUsageErrors(t, parseOptions, []clitest.UsageCase{
		{Args: []string{"--list"}, Want: `Missing required argument "[authorizer-properties]"`},
		{Args: []string{"--bootstrap-server", "b:9092", "--authorizer", "x", "--list"}, Want: "Only one of --bootstrap-server or --authorizer must be specified"},
		{Args: with("--command-config", "f", "--list"), Want: "The --command-config option can only be used with --bootstrap-server option"},
		{Args: append(with("--list"), "--bootstrap-server", "b:9092"), Want: "The --authorizer-properties option can only be used with --authorizer option"},
		{Args: with("--topic", "t"), Want: "Command must include exactly one action: --list, --add, --remove. "},
		{Args: with("--add", "--list"), Want: "Command must include exactly one action: --list, --add, --remove. "},
		{Args: with("--list", "--allow-principal", "User:a"), Want: `Option "[list]" can't be used with option "[allow-principal]"`},
		{Args: with("--add", "--producer", "--topic", "t", "--operation", "Read"), Want: `Option "[producer]" can't be used with option "[operation]"`},
		{Args: with("--add", "--principal", "User:a"), Want: "The --principal option is only available if --list is set"},
		{Args: with("--add", "--producer"), Want: "With --producer you must specify a --topic"},
		{Args: with("--add", "--idempotent", "--topic", "t"), Want: "The --idempotent option is only available if --producer is set"},
		{Args: with("--add", "--consumer", "--topic", "t"), Want: "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified."},
		{Args: with("--list", "--resource-pattern-type", "fancy"), Want: "Cannot parse argument 'fancy' of option resource-pattern-type"},
		{Args: with("--list", "--resource-pattern-type", "unknown"), Want: "Unknown resource-pattern-type: unknown"},
		{Args: with("--list", "--tpoic", "t"), Want: "tpoic is not a recognized option"},
	})
}

// inProcess runs the tool's run with stdin.
func inProcess(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb strings.Builder
	code = run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// resourceBlock is one "Adding ACLs" or "Current ACLs" paragraph as
// AclCommand prints it: the resource, then each entry after a tab, the
// lines joined by newlines, with Kafka's stray spaces.
func resourceBlock(verb, resource string, entries ...string) string {
	return verb + " for resource `" + resource + "`: \n \t" + strings.Join(entries, "\n\t") + " \n\n"
}

const (
	ordersLiteral = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"
	aliceRead     = "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
)

// kafka-acls.sh --authorizer-properties zookeeper.connect=... as a
// process: it writes Kafka's resource node and change node itself and
// prints AclCommand's lines.
func TestZooKeeperModeScript(t *testing.T) {
	connect, zk := clitest.ZooKeeper(t)
	props := []string{"--authorizer-properties", "zookeeper.connect=" + connect}
	args := func(extra ...string) []string { return append(append([]string{}, props...), extra...) }

	out, errOut, code := clitest.Script(t, nil, "kafka-acls.sh", args("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")...)
	want := resourceBlock("Adding ACLs", ordersLiteral, aliceRead) + resourceBlock("Current ACLs", ordersLiteral, aliceRead)
	if code != 0 || out != want {
		t.Fatalf("add: exit %d\n%q\nwant\n%q\nstderr %s", code, out, want, errOut)
	}
	data, _, err := zk.Get("/kafka-acl/Topic/orders")
	if err != nil || string(data) != `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}` {
		t.Fatalf("znode %q %v", data, err)
	}
	kids, err := zk.Children("/kafka-acl-changes")
	if err != nil || len(kids) != 1 || !strings.HasPrefix(kids[0], "acl_changes_") {
		t.Fatalf("change nodes %v %v", kids, err)
	}
	if ch, _, _ := zk.Get("/kafka-acl-changes/" + kids[0]); string(ch) != "TOPIC:orders" {
		t.Fatalf("change node %q", ch)
	}

	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.7",
		"--operation", "Write", "--operation", "Describe", "--topic", "orders-", "--resource-pattern-type", "prefixed")...)
	pre := "ResourcePattern(resourceType=TOPIC, name=orders-, patternType=PREFIXED)"
	denyW := "(principal=User:mallory, host=10.0.0.7, operation=WRITE, permissionType=DENY)"
	denyD := "(principal=User:mallory, host=10.0.0.7, operation=DESCRIBE, permissionType=DENY)"
	if want := resourceBlock("Adding ACLs", pre, denyW, denyD) + resourceBlock("Current ACLs", pre, denyW, denyD); code != 0 || out != want {
		t.Fatalf("add prefixed: exit %d\n%q\nwant\n%q", code, out, want)
	}
	if data, _, err := zk.Get("/kafka-acl-extended/prefixed/Topic/orders-"); err != nil || !strings.Contains(string(data), `"permissionType":"Deny","operation":"Describe","host":"10.0.0.7"`) {
		t.Fatalf("prefixed znode %q %v", data, err)
	}
	kids, _ = zk.Children("/kafka-acl-extended-changes")
	if len(kids) != 1 {
		t.Fatalf("extended change nodes %v", kids)
	}
	if ch, _, _ := zk.Get("/kafka-acl-extended-changes/" + kids[0]); string(ch) != `{"version":1,"resourceType":"TOPIC","name":"orders-","patternType":"PREFIXED"}` {
		t.Fatalf("extended change node %q", ch)
	}

	// --resource-pattern-type match lists every pattern affecting a name.
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--list", "--topic", "orders-eu", "--resource-pattern-type", "match")...)
	if want := resourceBlock("Current ACLs", pre, denyW, denyD); code != 0 || out != want {
		t.Fatalf("list match: exit %d\n%q\nwant\n%q", code, out, want)
	}
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--list", "--principal", "User:alice")...)
	if want := "ACLs for principal `User:alice`\n" + resourceBlock("Current ACLs", ordersLiteral, aliceRead); code != 0 || out != want {
		t.Fatalf("list principal: exit %d\n%q\nwant\n%q", code, out, want)
	}

	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--remove", "--force", "--topic", "orders-", "--resource-pattern-type", "prefixed")...)
	if code != 0 || out != "" {
		t.Fatalf("remove: exit %d %q", code, out)
	}
	if ok, _, _ := zk.Exists("/kafka-acl-extended/prefixed/Topic/orders-"); ok {
		t.Fatal("prefixed node still there")
	}
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--add", "--allow-principal", "alice", "--topic", "t")...)
	if code != 1 || out != "Error while executing ACL command: expected a string in format principalType:principalName but got alice\n" {
		t.Fatalf("bad principal: exit %d %q", code, out)
	}
	_, errOut, code = clitest.Script(t, nil, "kafka-acls.sh", args("--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Write")...)
	if code != 1 || !strings.HasPrefix(errOut, "ResourceType GROUP only supports operations READ,DESCRIBE,DELETE,ALL\n") {
		t.Fatalf("bad operation: exit %d %q", code, errOut)
	}
}

// --remove without --force asks first, as Kafka does, and only "y" (any
// case) removes.
func TestRemoveAsksForConfirmation(t *testing.T) {
	connect, zk := clitest.ZooKeeper(t)
	props := []string{"--authorizer-properties", "zookeeper.connect=" + connect}
	args := func(extra ...string) []string { return append(append([]string{}, props...), extra...) }
	if _, _, code := inProcess(t, "", args("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")...); code != 0 {
		t.Fatal("add failed")
	}
	question := "Are you sure you want to remove ACLs: \n \t" + aliceRead + " \n from resource filter `" + ordersLiteral + "`? (y/n)\n"
	out, _, code := inProcess(t, "n\n", args("--remove", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")...)
	if want := question + resourceBlock("Current ACLs", ordersLiteral, aliceRead); code != 0 || out != want {
		t.Fatalf("declined: exit %d\n%q\nwant\n%q", code, out, want)
	}
	out, _, code = inProcess(t, "Y\n", args("--remove", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")...)
	if code != 0 || out != question {
		t.Fatalf("confirmed: exit %d %q", code, out)
	}
	if ok, _, _ := zk.Exists("/kafka-acl/Topic/orders"); ok {
		t.Fatal("node still there after the confirmed removal")
	}
	out, _, _ = inProcess(t, "", args("--remove", "--topic", "orders")...)
	if out != "Are you sure you want to delete all ACLs for resource filter `"+ordersLiteral+"`? (y/n)\n" {
		t.Fatalf("remove all, no answer: %q", out)
	}
}

// kafka-acls.sh --bootstrap-server as a process against a broker with the
// AclAuthorizer (the PLAINTEXT client is User:ANONYMOUS, a super user),
// and against one without an authorizer.
func TestBootstrapModeScript(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer", "super.users": "User:ANONYMOUS"}})
	bs := []string{"--bootstrap-server", strings.Join(c.Bootstrap(), ",")}
	args := func(extra ...string) []string { return append(append([]string{}, bs...), extra...) }
	cfg := clitest.WriteFile(t, "request.timeout.ms=20000\n")

	out, errOut, code := clitest.Script(t, nil, "kafka-acls.sh", args("--command-config", cfg, "--add", "--consumer", "--allow-principal", "User:alice", "--topic", "orders", "--group", "billing")...)
	group := "ResourcePattern(resourceType=GROUP, name=billing, patternType=LITERAL)"
	aliceDescribe := "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)"
	want := resourceBlock("Adding ACLs", ordersLiteral, aliceRead, aliceDescribe) + resourceBlock("Adding ACLs", group, aliceRead) +
		resourceBlock("Current ACLs", ordersLiteral, aliceRead, aliceDescribe) + resourceBlock("Current ACLs", group, aliceRead)
	if code != 0 || out != want {
		t.Fatalf("add: exit %d\n%q\nwant\n%q\nstderr %s", code, out, want, errOut)
	}
	if data, _, err := c.ZK().Get("/kafka-acl/Group/billing"); err != nil ||
		string(data) != `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}` {
		t.Fatalf("group znode %q %v", data, err)
	}
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--list", "--group", "billing")...)
	if want := resourceBlock("Current ACLs", group, aliceRead); code != 0 || out != want {
		t.Fatalf("list: exit %d\n%q\nwant\n%q", code, out, want)
	}
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", args("--remove", "--force", "--topic", "orders", "--group", "billing")...)
	if code != 0 || out != "" {
		t.Fatalf("remove: exit %d %q", code, out)
	}
	if ok, _, _ := c.ZK().Exists("/kafka-acl/Topic/orders"); ok {
		t.Fatal("topic node still there")
	}

	// The ZooKeeper mode against the running broker: the change node the
	// tool writes makes the broker's authorizer load the ACL.
	if _, _, code := clitest.Script(t, nil, "kafka-acls.sh", "--authorizer-properties", "zookeeper.connect="+c.ZKConnect(),
		"--add", "--allow-principal", "User:carol", "--operation", "Write", "--transactional-id", "tx-1"); code != 0 {
		t.Fatalf("zookeeper mode add: exit %d", code)
	}
	c.WaitFor(10*time.Second, "carol's transactional id ACL on the broker", func() bool {
		return c.Broker(0).Authorizer().Authorize(context.Background(), api.Action{Principal: "User:carol", Host: "10.0.0.1",
			Operation: kmsg.ACLOperationWrite, ResourceType: kmsg.ACLResourceTypeTransactionalId, Name: "tx-1"})
	})

	open := testcluster.Start(t, testcluster.Options{Brokers: 1})
	out, _, code = clitest.Script(t, nil, "kafka-acls.sh", "--bootstrap-server", strings.Join(open.Bootstrap(), ","), "--list")
	if code != 1 || out != "Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker\n" {
		t.Fatalf("no authorizer: exit %d %q", code, out)
	}
}

// FuzzParseOptions: no command line panics the parser, and every accepted
// one names exactly one action.
func FuzzParseOptions(f *testing.F) {
	clitest.FuzzCommandLines(f, parseOptions, []string{
		"--authorizer-properties zookeeper.connect=z --add --allow-principal User:a --topic t",
		"--bootstrap-server b:1 --list --principal",
		"--bootstrap-server b:1 --remove --producer --idempotent --topic t --transactional-id x --resource-pattern-type PREFIXED",
		"--authorizer-properties zookeeper.connect=z --list --resource-pattern-type match --topic t --cluster",
	}, func(t *testing.T, line string, o *aclOptions) {
		n := 0
		for _, a := range []string{"add", "remove", "list"} {
			if o.o.Has(a) {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%q accepted with %d actions", line, n)
		}
		if _, err := o.resourceFilters(false); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	})
}

// No argument or --help prints the help with printUsageAndDie (stderr,
// status 1), --version the version.
func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}} {
		out, errOut, code := inProcess(t, "", args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, helpText+"\nOption ") || !strings.Contains(errOut, "--resource-pattern-type <ANY|MATCH|LITERAL|PREFIXED>") {
			t.Fatalf("%v: exit %d stdout %q stderr %q", args, code, out, errOut)
		}
	}
	if out, _, code := inProcess(t, "", "--version"); code != 0 || !strings.Contains(out, "Klassik") {
		t.Fatalf("--version: %d %q", code, out)
	}
}
