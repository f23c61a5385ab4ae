package zkclient_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
)

// TestUserConfigs: a credential change keeps the user's quotas, writes the
// node in Kafka's shape under the sanitized name with a version 2 change
// notification, and deleting the last key removes the node.
func TestUserConfigs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := readyClient(t, b)
		const user = "alice@example.com"
		// A quota another tool wrote.
		_, err := c.CreateRecursive(zkpaths.UserConfigPath(user), []byte(`{"version":1,"config":{"producer_byte_rate":"1024"}}`), 0)
		mustNoErr(t, err)
		u, err := c.GetUserConfig(user)
		mustNoErr(t, err)
		u.Scram["SCRAM-SHA-512"] = "salt=eA==,stored_key=AA==,server_key=AQ==,iterations=4096"
		mustNoErr(t, c.ChangeUserConfig(user, u))

		data, _, err := c.Get("/config/users/alice%40example.com")
		mustNoErr(t, err)
		if want := `{"version":1,"config":{"SCRAM-SHA-512":"salt=eA==,stored_key=AA==,server_key=AQ==,iterations=4096","producer_byte_rate":"1024"}}`; string(data) != want {
			t.Fatalf("node = %s\nwant %s", data, want)
		}
		kids, err := c.Children(zkpaths.ConfigChangesPath)
		mustNoErr(t, err)
		if len(kids) != 1 {
			t.Fatalf("notifications %v", kids)
		}
		n, _, err := c.Get(zkpaths.ConfigChangesPath + "/" + kids[0])
		mustNoErr(t, err)
		if string(n) != `{"version":2,"entity_path":"users/alice%40example.com"}` {
			t.Fatalf("notification %s", n)
		}

		// A second user, the default entity (quotas only) and a broken node.
		mustNoErr(t, c.ChangeUserConfig("bob", zkpaths.UserConfig{Scram: map[string]string{"SCRAM-SHA-256": "x"}}))
		_, err = c.Create(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "<default>"), []byte(`{"version":1,"config":{"producer_byte_rate":"1"}}`), 0)
		mustNoErr(t, err)
		_, err = c.Create(zkpaths.ConfigPath(zkpaths.ConfigTypeUser, "broken"), []byte(`{"version":1,"config":[`), 0)
		mustNoErr(t, err)
		all, bad, err := c.GetAllUserConfigs()
		mustNoErr(t, err)
		if len(all) != 2 || all["bob"].Scram["SCRAM-SHA-256"] != "x" || !maps.Equal(all[user].Other, map[string]string{"producer_byte_rate": "1024"}) {
			t.Fatalf("all users %+v", all)
		}
		if _, ok := bad["broken"]; !ok || len(bad) != 1 {
			t.Fatalf("bad %v", bad)
		}

		// bob's only key goes: the node goes.
		mustNoErr(t, c.ChangeUserConfig("bob", zkpaths.UserConfig{}))
		if _, _, err := c.Get(zkpaths.UserConfigPath("bob")); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("bob's node after deleting its last key: %v", err)
		}
		u, err = c.GetUserConfig("bob")
		mustNoErr(t, err)
		if len(u.Scram) != 0 || u.Scram == nil {
			t.Fatalf("missing user %+v", u)
		}
	})
}
