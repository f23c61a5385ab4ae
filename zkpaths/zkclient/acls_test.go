package zkclient_test

import (
	"slices"
	"testing"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// The ACL store operations as KafkaZkClient's: the store layout, versioned
// reads, conditional writes that report a lost race instead of failing,
// and sequential change nodes.
func TestACLStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		mustNoErr(t, c.CreateACLPaths())
		mustNoErr(t, c.CreateACLPaths()) // idempotent
		types, err := c.GetACLResourceTypes("PREFIXED")
		mustNoErr(t, err)
		if want := []string{"Cluster", "DelegationToken", "Group", "Topic", "TransactionalId"}; !slices.Equal(types, want) {
			t.Fatalf("types %v, want %v", types, want)
		}
		for _, p := range []string{"/kafka-acl-changes", "/kafka-acl-extended-changes", "/kafka-acl/Topic"} {
			if ok, _, err := c.Exists(p); err != nil || !ok {
				t.Fatalf("%s missing: %v", p, err)
			}
		}
		data, v, err := c.GetACLs("LITERAL", "Topic", "t")
		if err != nil || data != nil || v != zkclient.NoACLVersion {
			t.Fatalf("missing node: %q %d %v", data, v, err)
		}
		one := zkpaths.EncodeACLs([]zkpaths.ACLEntry{{Principal: "User:a", PermissionType: "Allow", Operation: "Read", Host: "*"}})
		if ok, err := c.CreateACLsIfNotExists("LITERAL", "Topic", "t", one); !ok || err != nil {
			t.Fatalf("create: %v %v", ok, err)
		}
		if ok, err := c.CreateACLsIfNotExists("LITERAL", "Topic", "t", one); ok || err != nil {
			t.Fatalf("second create: %v %v, want a lost race", ok, err)
		}
		if ok, _, err := c.ConditionalSetACLs("LITERAL", "Topic", "t", one, 5); ok || err != nil {
			t.Fatalf("stale set: %v %v", ok, err)
		}
		ok, v, err := c.ConditionalSetACLs("LITERAL", "Topic", "t", one, 0)
		if !ok || err != nil || v != 1 {
			t.Fatalf("set: %v %d %v", ok, v, err)
		}
		if ok, err := c.ConditionalDeleteACLs("LITERAL", "Topic", "t", 0); ok || err != nil {
			t.Fatalf("stale delete: %v %v", ok, err)
		}
		if ok, err := c.ConditionalDeleteACLs("LITERAL", "Topic", "t", 1); !ok || err != nil {
			t.Fatalf("delete: %v %v", ok, err)
		}
		if ok, err := c.ConditionalDeleteACLs("LITERAL", "Topic", "t", zkclient.NoACLVersion); !ok || err != nil {
			t.Fatalf("delete of a missing node: %v %v", ok, err)
		}
		// A type directory an older tool did not create.
		mustNoErr(t, c.DeleteRecursive("/kafka-acl-extended/prefixed/Group"))
		if ok, err := c.CreateACLsIfNotExists("PREFIXED", "Group", "app-", one); !ok || err != nil {
			t.Fatalf("create without the type directory: %v %v", ok, err)
		}
		names, err := c.GetACLResourceNames("PREFIXED", "Group")
		if err != nil || !slices.Equal(names, []string{"app-"}) {
			t.Fatalf("names %v %v", names, err)
		}
		n1, err := c.CreateACLChangeNotification("LITERAL", zkpaths.EncodeLiteralACLChange("TOPIC", "t"))
		mustNoErr(t, err)
		n2, err := c.CreateACLChangeNotification("PREFIXED", zkpaths.ExtendedACLChange{ResourceType: "GROUP", Name: "app-", PatternType: "PREFIXED"}.Encode())
		mustNoErr(t, err)
		if n1 != "acl_changes_0000000000" || n2 != "acl_changes_0000000000" {
			t.Fatalf("change nodes %s %s", n1, n2)
		}
		if d, _, _ := c.Get("/kafka-acl-changes/" + n1); string(d) != "TOPIC:t" {
			t.Fatalf("literal change %q", d)
		}
	})
}
