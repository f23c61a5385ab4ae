package api

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
)

// memACLs is an in-memory ACLAdmin with the filter semantics of
// broker/security (the ZooKeeper authorizer has its own tests).
type memACLs struct {
	mu sync.Mutex
	b  []security.ACLBinding
}

func (m *memACLs) ACLs(f security.ACLFilter) []security.ACLBinding {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []security.ACLBinding
	for _, b := range m.b {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out
}

func (m *memACLs) CreateACLs(_ context.Context, bs []security.ACLBinding) []*security.ACLError {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b = append(m.b, bs...)
	return make([]*security.ACLError, len(bs))
}

func (m *memACLs) DeleteACLs(_ context.Context, fs []security.ACLFilter) []security.ACLDeleteResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]security.ACLDeleteResult, len(fs))
	var keep []security.ACLBinding
	for _, b := range m.b {
		gone := false
		for i, f := range fs {
			if f.Matches(b) {
				out[i].Deleted, out[i].Failures, gone = append(out[i].Deleted, b), append(out[i].Failures, nil), true
				break
			}
		}
		if !gone {
			keep = append(keep, b)
		}
	}
	m.b = keep
	return out
}

func aclApis(t testing.TB, acls ACLAdmin, authz Authorizer) *Apis {
	a := New(Config{BrokerID: 1, ClusterID: "c1", ACLs: acls, Authorizer: authz, Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	return a
}

func handle[R kmsg.Response](t *testing.T, a *Apis, req kmsg.Request) R {
	t.Helper()
	resp, err := a.Handle(context.Background(), &network.Request{Key: req.Key(), Version: req.GetVersion(), Body: req, Listener: "PLAINTEXT"})
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp.(R)
}

func creation(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
	return c
}

// The ACL APIs' answers that do not depend on the store: SECURITY_DISABLED
// without an authorizer, CLUSTER_AUTHORIZATION_FAILED without ALTER or
// DESCRIBE on the cluster, INVALID_REQUEST for bad bindings; then a
// create, describe, delete round.
func TestACLAPIs(t *testing.T) {
	off := aclApis(t, nil, nil)
	d := kmsg.NewPtrDescribeACLsRequest()
	d.Version = 3
	d.ResourceType, d.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	d.Operation, d.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	if r := handle[*kmsg.DescribeACLsResponse](t, off, d); r.ErrorCode != kerr.SecurityDisabled.Code || *r.ErrorMessage != "No Authorizer is configured on the broker" {
		t.Fatalf("describe without authorizer: %d %v", r.ErrorCode, r.ErrorMessage)
	}
	c := kmsg.NewPtrCreateACLsRequest()
	c.Version = 3
	c.Creations = []kmsg.CreateACLsRequestCreation{creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead)}
	if r := handle[*kmsg.CreateACLsResponse](t, off, c); r.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("create without authorizer: %+v", r.Results)
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 3
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = []kmsg.DeleteACLsRequestFilter{f}
	if r := handle[*kmsg.DeleteACLsResponse](t, off, del); r.Results[0].ErrorCode != kerr.SecurityDisabled.Code {
		t.Fatalf("delete without authorizer: %+v", r.Results)
	}

	denied := aclApis(t, &memACLs{}, &denyList{denied: map[kmsg.ACLResourceType]map[string]bool{kmsg.ACLResourceTypeCluster: {"kafka-cluster": true}}})
	if r := handle[*kmsg.DescribeACLsResponse](t, denied, d); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("describe denied: %d", r.ErrorCode)
	}
	if r := handle[*kmsg.CreateACLsResponse](t, denied, c); r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("create denied: %+v", r.Results)
	}
	if r := handle[*kmsg.DeleteACLsResponse](t, denied, del); r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("delete denied: %+v", r.Results)
	}

	store := &memACLs{}
	a := aclApis(t, store, &denyList{})
	bad := kmsg.NewPtrCreateACLsRequest()
	bad.Version = 3
	unknownOp := creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:a", 13) // CREATE_TOKENS: 3.x only
	bad.Creations = []kmsg.CreateACLsRequestCreation{
		creation(kmsg.ACLResourceTypeCluster, "c", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationAlter),
		creation(kmsg.ACLResourceTypeTopic, "", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeMatch, "User:a", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "alice", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationAny),
		unknownOp,
		creation(kmsg.ACLResourceTypeTopic, "orders-", kmsg.ACLResourcePatternTypePrefixed, "User:a", kmsg.ACLOperationWrite),
	}
	r := handle[*kmsg.CreateACLsResponse](t, a, bad)
	wantMsgs := []string{"The only valid name for the CLUSTER resource is kafka-cluster", "Invalid empty resource name",
		"Failed to create ACL", "Failed to create ACL", "Failed to create ACL", "Failed to create ACL", ""}
	for i, res := range r.Results {
		msg := ""
		if res.ErrorMessage != nil {
			msg = *res.ErrorMessage
		}
		wantCode := kerr.InvalidRequest.Code
		if wantMsgs[i] == "" {
			wantCode = 0
		}
		if res.ErrorCode != wantCode || msg != wantMsgs[i] {
			t.Errorf("creation %d: %d %q, want %d %q", i, res.ErrorCode, msg, wantCode, wantMsgs[i])
		}
	}
	dr := handle[*kmsg.DescribeACLsResponse](t, a, d)
	if dr.ErrorCode != 0 || len(dr.Resources) != 1 || dr.Resources[0].ResourceName != "orders-" || dr.Resources[0].ResourcePatternType != kmsg.ACLResourcePatternTypePrefixed ||
		len(dr.Resources[0].ACLs) != 1 || dr.Resources[0].ACLs[0].Operation != kmsg.ACLOperationWrite {
		t.Fatalf("describe: %+v", dr)
	}
	// Version 0 knows only literal patterns: the prefixed ACL is not listed.
	d0 := *d
	d0.Version = 0
	if dr := handle[*kmsg.DescribeACLsResponse](t, a, &d0); dr.ErrorCode != 0 || len(dr.Resources) != 0 {
		t.Fatalf("describe v0: %+v", dr)
	}
	unknownFilter := *del
	uf := f
	uf.ResourceType = 0
	unknownFilter.Filters = []kmsg.DeleteACLsRequestFilter{uf, f}
	dl := handle[*kmsg.DeleteACLsResponse](t, a, &unknownFilter)
	if dl.Results[0].ErrorCode != kerr.InvalidRequest.Code || dl.Results[1].ErrorCode != 0 || len(dl.Results[1].MatchingACLs) != 1 ||
		!strings.HasPrefix(dl.Results[1].MatchingACLs[0].ResourceName, "orders") {
		t.Fatalf("delete: %+v", dl.Results)
	}
	if len(store.ACLs(security.AnyACL)) != 0 {
		t.Fatal("not deleted")
	}
}

// FuzzACLRequests: arbitrary DescribeAcls, CreateAcls and DeleteAcls
// bodies at every version never panic a handler and always get a response.
func FuzzACLRequests(f *testing.F) {
	c := kmsg.NewPtrCreateACLsRequest()
	c.Version = 3
	c.Creations = []kmsg.CreateACLsRequestCreation{creation(kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:a", kmsg.ACLOperationRead)}
	f.Add(int16(30), int16(3), c.AppendTo(nil))
	d := kmsg.NewPtrDescribeACLsRequest()
	d.Version = 1
	f.Add(int16(29), int16(1), d.AppendTo(nil))
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 2
	del.Filters = []kmsg.DeleteACLsRequestFilter{kmsg.NewDeleteACLsRequestFilter()}
	f.Add(int16(31), int16(2), del.AppendTo(nil))
	a := aclApis(f, &memACLs{}, &denyList{})
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		key = 29 + (key%3+3)%3
		req := kmsg.RequestForKey(key)
		if version < 0 || version > 3 {
			return
		}
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return
		}
		resp, err := a.Handle(context.Background(), &network.Request{Key: key, Version: version, Body: req, Listener: "PLAINTEXT"})
		if err != nil || resp == nil {
			t.Fatalf("key %d v%d: %v", key, version, err)
		}
	})
}
