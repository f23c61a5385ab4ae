package authorizer_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/api"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/security/authorizer"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// logLines collects what an authorizer logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, string(p))
	return len(p), nil
}

func (l *logLines) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// started connects to a fresh chroot on the real ZooKeeper and starts an
// authorizer on it, as a broker does.
func started(t *testing.T, connect string, cfg authorizer.Config) (*authorizer.Authorizer, *zkclient.Client) {
	t.Helper()
	zk, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zk.Close)
	a := authorizer.New(zk, cfg)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, zk
}

func binding(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) security.ACLBinding {
	return security.ACLBinding{Pattern: security.ResourcePattern{ResourceType: rt, Name: name, PatternType: pt},
		Entry: security.AccessControlEntry{Principal: principal, Host: "*", Operation: op, Permission: perm}}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testcluster.Poll(10*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func read(principal, topic string) api.Action {
	return api.Action{Principal: principal, Host: "127.0.0.1", Operation: kmsg.ACLOperationRead, ResourceType: kmsg.ACLResourceTypeTopic, Name: topic}
}

// Two authorizers on one ZooKeeper tree (two brokers): a change made by
// one reaches the other through the change node; a concurrent write the
// first has not seen is merged, not lost, thanks to the versioned update;
// a notification that cannot be read is skipped and the next one handled.
func TestAuthorizersShareZooKeeper(t *testing.T) {
	connect := zkserver.ConnectString(t)
	var logs logLines
	a, zk := started(t, connect, authorizer.Config{})
	b, _ := started(t, connect, authorizer.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()

	if errs := a.CreateACLs(ctx, []security.ACLBinding{binding(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	waitFor(t, "alice on the second authorizer", func() bool { return b.Authorize(ctx, read("User:alice", "t")) })
	if !logs.has(`msg="Principal = User:alice is Allowed Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:t"`) {
		t.Errorf("no decision line in %v", logs.lines)
	}
	b.Authorize(ctx, read("User:eve", "t"))
	if !logs.has(`level=INFO msg="Principal = User:eve is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:t"`) {
		t.Errorf("denial not logged at info: %v", logs.lines)
	}

	// Another writer (Kafka's kafka-acls.sh, say) adds carol without a
	// change node; a's cache is stale, its conditional write fails, it
	// re-reads and keeps carol.
	if _, err := zk.Set("/kafka-acl/Topic/t", []byte(`{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},`+
		`{"principal":"User:carol","permissionType":"Allow","operation":"Read","host":"*"}]}`), -1); err != nil {
		t.Fatal(err)
	}
	if errs := a.CreateACLs(ctx, []security.ACLBinding{binding(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:bob", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	data, _, _ := zk.Get("/kafka-acl/Topic/t")
	for _, p := range []string{"User:alice", "User:bob", "User:carol"} {
		if !strings.Contains(string(data), `"principal":"`+p+`"`) {
			t.Fatalf("%s lost: %s", p, data)
		}
	}
	waitFor(t, "carol and bob on the second authorizer", func() bool {
		return b.Authorize(ctx, read("User:carol", "t")) && b.Authorize(ctx, read("User:bob", "t"))
	})

	// A garbage notification is skipped; the one after it is handled.
	if _, err := zk.Create("/kafka-acl-changes/acl_changes_", []byte("garbage"), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	if err := zk.Delete("/kafka-acl/Topic/t", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := zk.Create("/kafka-acl-changes/acl_changes_", []byte("TOPIC:t"), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deletion on both", func() bool {
		return !a.Authorize(ctx, read("User:alice", "t")) && !b.Authorize(ctx, read("User:alice", "t"))
	})
}

// Kafka's AclAuthorizer.deleteAcls: every binding a filter matches goes,
// reported under the first filter matching it; filters naming one pattern
// reach nodes the cache has not seen.
func TestDeleteACLs(t *testing.T) {
	connect := zkserver.ConnectString(t)
	a, zk := started(t, connect, authorizer.Config{})
	ctx := context.Background()
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	allow := kmsg.ACLPermissionTypeAllow
	errs := a.CreateACLs(ctx, []security.ACLBinding{
		binding(kmsg.ACLResourceTypeTopic, "t", lit, "User:a", kmsg.ACLOperationRead, allow),
		binding(kmsg.ACLResourceTypeTopic, "t", lit, "User:b", kmsg.ACLOperationWrite, allow),
		binding(kmsg.ACLResourceTypeTopic, "t", pre, "User:a", kmsg.ACLOperationRead, allow),
		binding(kmsg.ACLResourceTypeGroup, "g", lit, "User:a", kmsg.ACLOperationRead, allow),
		{Pattern: security.ResourcePattern{ResourceType: kmsg.ACLResourceTypeTopic, Name: "x", PatternType: kmsg.ACLResourcePatternTypeMatch},
			Entry: security.AccessControlEntry{Principal: "User:a", Host: "*", Operation: kmsg.ACLOperationRead, Permission: allow}},
	})
	for i, e := range errs[:4] {
		if e != nil {
			t.Fatalf("create %d: %v", i, e)
		}
	}
	if errs[4] == nil || errs[4].Err != kerr.InvalidRequest || errs[4].Message != "Failed to create ACL" {
		t.Fatalf("MATCH binding: %v", errs[4])
	}
	name := "t"
	userA := "User:a"
	anyEntry := security.EntryFilter{Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}
	res := a.DeleteACLs(ctx, []security.ACLFilter{
		{Pattern: security.PatternFilter{ResourceType: kmsg.ACLResourceTypeTopic, Name: &name, PatternType: kmsg.ACLResourcePatternTypeAny},
			Entry: security.EntryFilter{Principal: &userA, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}},
		{Pattern: security.AnyACL.Pattern, Entry: anyEntry},
	})
	if len(res[0].Deleted) != 2 || len(res[1].Deleted) != 2 {
		t.Fatalf("deleted %v / %v", res[0].Deleted, res[1].Deleted)
	}
	for _, p := range []string{"/kafka-acl/Topic/t", "/kafka-acl-extended/prefixed/Topic/t", "/kafka-acl/Group/g"} {
		if ok, _, _ := zk.Exists(p); ok {
			t.Errorf("%s left", p)
		}
	}
	// A node written by another tool after this authorizer loaded: a
	// definite filter still finds it.
	if _, err := zk.Create("/kafka-acl/Topic/late", []byte(`{"version":1,"acls":[{"principal":"User:z","permissionType":"Allow","operation":"Read","host":"*"}]}`), 0); err != nil {
		t.Fatal(err)
	}
	late := "late"
	res = a.DeleteACLs(ctx, []security.ACLFilter{{Pattern: security.PatternFilter{ResourceType: kmsg.ACLResourceTypeTopic, Name: &late, PatternType: lit}, Entry: anyEntry}})
	if len(res[0].Deleted) != 1 || res[0].Deleted[0].Entry.Principal != "User:z" {
		t.Fatalf("late node: %+v", res[0])
	}
}

// ZkNodeChangeNotificationListener deletes change nodes older than 15
// minutes once it has handled them; an unreadable resource node counts as
// no ACLs.
func TestOldChangeNodesArePurged(t *testing.T) {
	connect := zkserver.ConnectString(t)
	zk, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zk.Close)
	if err := zk.CreateACLPaths(); err != nil {
		t.Fatal(err)
	}
	if _, err := zk.Create("/kafka-acl/Topic/bad", []byte(`{"version":7}`), 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := zk.CreateACLChangeNotification("LITERAL", []byte("TOPIC:bad")); err != nil {
			t.Fatal(err)
		}
	}
	later := func() time.Time { return time.Now().Add(16 * time.Minute) }
	a, _ := started(t, connect, authorizer.Config{Now: later, AllowEveryoneIfNoACLFound: true})
	waitFor(t, "the old change nodes purged", func() bool {
		kids, err := zk.Children("/kafka-acl-changes")
		return err == nil && len(kids) == 0
	})
	if !a.Authorize(context.Background(), read("User:x", "bad")) {
		t.Fatal("an unreadable node must count as no ACLs")
	}
}
