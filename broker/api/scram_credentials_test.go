package api

import (
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/zkpaths"
)

// memUsers is an in-memory UserCredentialStore for the handlers' checks;
// the ZooKeeper path is covered by the broker's integration test.
type memUsers struct{ m map[string]zkpaths.UserConfig }

func (s *memUsers) GetUserConfig(user string) (zkpaths.UserConfig, error) {
	u, ok := s.m[user]
	if !ok {
		return zkpaths.SplitUserConfig(nil), nil
	}
	return zkpaths.SplitUserConfig(u.Config()), nil
}

func (s *memUsers) GetAllUserConfigs() (map[string]zkpaths.UserConfig, map[string]error, error) {
	return s.m, nil, nil
}

func (s *memUsers) ChangeUserConfig(user string, u zkpaths.UserConfig) error {
	s.m[user] = u
	return nil
}

func scramApis(t *testing.T, active bool, authz Authorizer) (*Apis, *memUsers) {
	t.Helper()
	users := &memUsers{m: map[string]zkpaths.UserConfig{
		"alice": zkpaths.SplitUserConfig(map[string]string{"SCRAM-SHA-512": "salt=eA==,stored_key=AA==,server_key=AQ==,iterations=8192", "producer_byte_rate": "1"}),
		"bad":   zkpaths.SplitUserConfig(map[string]string{"SCRAM-SHA-256": "garbage"}),
		"quota": zkpaths.SplitUserConfig(map[string]string{"producer_byte_rate": "1"}),
	}}
	a := New(Config{BrokerID: 1, Users: users, Controller: fakeController{active: active}, Authorizer: authz,
		Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	return a, users
}

func TestDescribeUserScramCredentialsRules(t *testing.T) {
	a, _ := scramApis(t, true, nil)
	resp := call[*kmsg.DescribeUserSCRAMCredentialsResponse](t, a, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	// All users: only those with credentials, sorted; a broken credential
	// is the user's UNKNOWN_SERVER_ERROR.
	if len(resp.Results) != 2 || resp.Results[0].User != "alice" || resp.Results[1].User != "bad" ||
		len(resp.Results[0].CredentialInfos) != 1 || resp.Results[0].CredentialInfos[0].Mechanism != 2 ||
		resp.Results[0].CredentialInfos[0].Iterations != 8192 || resp.Results[1].ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("describe all: %+v", resp.Results)
	}
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range []string{"quota"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		req.Users = append(req.Users, u)
	}
	resp = call[*kmsg.DescribeUserSCRAMCredentialsResponse](t, a, req)
	if len(resp.Results) != 1 || resp.Results[0].ErrorCode != kerr.ResourceNotFound.Code {
		t.Fatalf("a user with quotas only: %+v", resp.Results)
	}
}

func TestUserScramCredentialsAuthorization(t *testing.T) {
	deny := &denyList{denied: map[kmsg.ACLResourceType]map[string]bool{kmsg.ACLResourceTypeCluster: {"kafka-cluster": true}}}
	a, users := scramApis(t, true, deny)
	d := call[*kmsg.DescribeUserSCRAMCredentialsResponse](t, a, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
	if d.ErrorCode != kerr.ClusterAuthorizationFailed.Code || d.ErrorMessage == nil || *d.ErrorMessage != "Cluster authorization failed." || len(d.Results) != 0 {
		t.Fatalf("describe denied: %+v", d)
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, n := range []string{"zed", "amy", "zed"} {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = n, 1, 4096, []byte("s"), []byte("p")
		req.Upsertions = append(req.Upsertions, u)
	}
	r := call[*kmsg.AlterUserSCRAMCredentialsResponse](t, a, req)
	if len(r.Results) != 2 || r.Results[0].User != "amy" || r.Results[1].User != "zed" ||
		r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code || r.Results[1].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alter denied: %+v", r.Results)
	}
	if _, ok := users.m["amy"]; ok {
		t.Fatal("a denied alteration was written")
	}
	var ops []kmsg.ACLOperation
	for _, act := range deny.asked {
		if act.ResourceType == kmsg.ACLResourceTypeCluster {
			ops = append(ops, act.Operation)
		}
	}
	if len(ops) != 2 || ops[0] != kmsg.ACLOperationDescribe || ops[1] != kmsg.ACLOperationAlter {
		t.Fatalf("asked %v, want DESCRIBE then ALTER on the cluster", ops)
	}

	// Not the controller: NOT_CONTROLLER before any authorization.
	b, _ := scramApis(t, false, nil)
	r = call[*kmsg.AlterUserSCRAMCredentialsResponse](t, b, req)
	if len(r.Results) != 2 || r.Results[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("not the controller: %+v", r.Results)
	}
}

// TestAlterUserScramCredentialsKeepsQuotas: an upsertion replaces only
// the mechanism's key; a deletion of the last credential leaves the quota.
func TestAlterUserScramCredentialsKeepsQuotas(t *testing.T) {
	a, users := scramApis(t, true, nil)
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = "alice", 2
	req.Deletions = append(req.Deletions, d)
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = "alice", 1, 4096, []byte("s"), nil
	req.Upsertions = append(req.Upsertions, u)
	r := call[*kmsg.AlterUserSCRAMCredentialsResponse](t, a, req)
	// An empty salted password is refused as Java's empty HMAC key is.
	if len(r.Results) != 1 || r.Results[0].ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("empty salted password: %+v", r.Results)
	}
	req.Upsertions[0].SaltedPassword = []byte("p")
	r = call[*kmsg.AlterUserSCRAMCredentialsResponse](t, a, req)
	if len(r.Results) != 1 || r.Results[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", r.Results)
	}
	got := users.m["alice"].Config()
	if len(got) != 2 || got["producer_byte_rate"] != "1" || got["SCRAM-SHA-256"] == "" {
		t.Fatalf("alice after the alteration: %v", got)
	}
}
