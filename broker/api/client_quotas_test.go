package api

import (
	"context"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/zkpaths"
)

// fakeQuotaStore is an in-memory ClientQuotaStore for the handlers' logic
// (the cluster tests use ZooKeeper): nodes by path below /config.
type fakeQuotaStore struct {
	mu    sync.Mutex
	nodes map[string]map[string]string // "users/alice" -> config
}

func newFakeQuotaStore() *fakeQuotaStore {
	return &fakeQuotaStore{nodes: map[string]map[string]string{}}
}

func (s *fakeQuotaStore) Children(p string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := strings.TrimPrefix(p, zkpaths.ConfigPathRoot+"/") + "/"
	seen := map[string]bool{}
	for k := range s.nodes {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			seen[strings.Split(rest, "/")[0]] = true
		}
	}
	if len(seen) == 0 {
		return nil, zk.ErrNoNode
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func (s *fakeQuotaStore) GetEntityConfigs(typ, name string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := maps.Clone(s.nodes[typ+"/"+name])
	if c == nil {
		c = map[string]string{}
	}
	return c, nil
}

func (s *fakeQuotaStore) ChangeEntityConfigs(typ, name string, cfg map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(cfg) == 0 {
		delete(s.nodes, typ+"/"+name)
		return nil
	}
	s.nodes[typ+"/"+name] = maps.Clone(cfg)
	return nil
}

func newQuotaApis(t testing.TB, s *fakeQuotaStore) *Apis {
	a := New(Config{BrokerID: 1, QuotaStore: s, Logger: slog.New(slog.DiscardHandler)})
	a.SetReady()
	return a
}

func alterOp(key string, v float64, remove bool) kmsg.AlterClientQuotasRequestEntryOp {
	return kmsg.AlterClientQuotasRequestEntryOp{Key: key, Value: v, Remove: remove}
}

func quotaEntity(kv ...*string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i < len(kv); i += 2 {
		out = append(out, kmsg.AlterClientQuotasRequestEntryEntity{Type: *kv[i], Name: kv[i+1]})
	}
	return out
}

var sp = kmsg.StringPtr

// TestAlterClientQuotasWritesKafkaNodes: values land in Kafka's node
// layout and text forms, SCRAM keys of a user node survive, errors carry
// Kafka's messages.
func TestAlterClientQuotasWritesKafkaNodes(t *testing.T) {
	s := newFakeQuotaStore()
	s.nodes["users/alice"] = map[string]string{"SCRAM-SHA-256": "salt=x"}
	a := newQuotaApis(t, s)
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Version = 1
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		{Entity: quotaEntity(sp("user"), sp("alice")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("producer_byte_rate", 1048576, false), alterOp("request_percentage", 12.5, false)}},
		{Entity: quotaEntity(sp("user"), sp("alice"), sp("client-id"), nil), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("controller_mutation_rate", 10, false)}},
		{Entity: quotaEntity(sp("client-id"), sp("my app")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("consumer_byte_rate", 2e7, false)}},
		{Entity: quotaEntity(sp("ip"), sp("10.1.2.3")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("connection_creation_rate", 5, false)}},
		{Entity: quotaEntity(sp("client-id"), sp("x")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("producer_byte_rate", 1.5, false)}},
		{Entity: quotaEntity(sp("client-id"), sp("x")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("bogus", 1, false)}},
		{Entity: nil},
		{Entity: quotaEntity(sp("group"), sp("g"))},
		{Entity: quotaEntity(sp("user"), sp(""))},
		{Entity: quotaEntity(sp("ip"), sp("1.2.3.4"), sp("user"), sp("u"))},
		{Entity: quotaEntity(sp("ip"), sp("not a host!")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("connection_creation_rate", 1, false)}},
	}
	resp := call[*kmsg.AlterClientQuotasResponse](t, a, req)
	want := []struct {
		code int16
		msg  string
	}{
		{0, ""}, {0, ""}, {0, ""}, {0, ""},
		{kerr.InvalidRequest.Code, "Configuration producer_byte_rate must be a LONG value"},
		{kerr.InvalidRequest.Code, "Invalid configuration key bogus"},
		{kerr.InvalidRequest.Code, "Invalid empty client quota entity"},
		{kerr.InvalidRequest.Code, "Unhandled client quota entity type: group"},
		{kerr.InvalidRequest.Code, "Empty user not supported"},
		{kerr.InvalidRequest.Code, "Invalid quota entity combination, IP entity should not be used with user/client ID entity."},
		{kerr.InvalidRequest.Code, "not%20a%20host%21 is not a valid IP or resolvable host."},
	}
	for i, w := range want {
		e := resp.Entries[i]
		msg := ""
		if e.ErrorMessage != nil {
			msg = *e.ErrorMessage
		}
		if e.ErrorCode != w.code || msg != w.msg {
			t.Errorf("entry %d: %d %q, want %d %q", i, e.ErrorCode, msg, w.code, w.msg)
		}
	}
	check := func(path string, want map[string]string) {
		t.Helper()
		if got := s.nodes[path]; !maps.Equal(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	check("users/alice", map[string]string{"SCRAM-SHA-256": "salt=x", "producer_byte_rate": "1048576", "request_percentage": "12.5"})
	check("users/alice/clients/<default>", map[string]string{"controller_mutation_rate": "10.0"})
	check("clients/my%20app", map[string]string{"consumer_byte_rate": "20000000"})
	check("ips/10.1.2.3", map[string]string{"connection_creation_rate": "5"})

	// Removing the last quota key deletes a client node.
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{{Entity: quotaEntity(sp("client-id"), sp("my app")),
		Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("consumer_byte_rate", 0, true)}}}
	if resp := call[*kmsg.AlterClientQuotasResponse](t, a, req); resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("remove: %v", resp.Entries[0].ErrorCode)
	}
	if _, ok := s.nodes["clients/my%20app"]; ok {
		t.Error("emptied client node not deleted")
	}
	// validate_only writes nothing.
	req.ValidateOnly = true
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{{Entity: quotaEntity(sp("client-id"), sp("v")),
		Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("consumer_byte_rate", 5, false)}}}
	call[*kmsg.AlterClientQuotasResponse](t, a, req)
	if _, ok := s.nodes["clients/v"]; ok {
		t.Error("validate_only wrote the node")
	}
}

func describe(t *testing.T, a *Apis, strict bool, comps ...kmsg.DescribeClientQuotasRequestComponent) *kmsg.DescribeClientQuotasResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Version = 1
	req.Strict, req.Components = strict, comps
	return call[*kmsg.DescribeClientQuotasResponse](t, a, req)
}

// entities renders a response's entities as "user=alice,client-id=<default>".
func entities(resp *kmsg.DescribeClientQuotasResponse) []string {
	var out []string
	for _, e := range resp.Entries {
		var parts []string
		for _, x := range e.Entity {
			n := "<default>"
			if x.Name != nil {
				n = *x.Name
			}
			parts = append(parts, x.Type+"="+n)
		}
		out = append(out, strings.Join(parts, ","))
	}
	sort.Strings(out)
	return out
}

// TestDescribeClientQuotasFilters follows Kafka's match semantics: exact,
// default and any components, strict excluding other entity types.
func TestDescribeClientQuotasFilters(t *testing.T) {
	s := newFakeQuotaStore()
	s.nodes["users/alice"] = map[string]string{"producer_byte_rate": "100", "SCRAM-SHA-256": "x"}
	s.nodes["users/bob"] = map[string]string{"SCRAM-SHA-256": "x"} // no quota: never listed
	s.nodes["users/<default>"] = map[string]string{"consumer_byte_rate": "5"}
	s.nodes["users/alice/clients/app"] = map[string]string{"request_percentage": "50"}
	s.nodes["users/<default>/clients/<default>"] = map[string]string{"request_percentage": "10"}
	s.nodes["clients/app"] = map[string]string{"producer_byte_rate": "7"}
	s.nodes["clients/<default>"] = map[string]string{"producer_byte_rate": "8"}
	s.nodes["ips/1.2.3.4"] = map[string]string{"connection_creation_rate": "3"}
	a := newQuotaApis(t, s)
	exact := func(typ, name string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: 0, Match: &name}
	}
	def := func(typ string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: 1}
	}
	anyOf := func(typ string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: 2}
	}
	for _, c := range []struct {
		name   string
		strict bool
		comps  []kmsg.DescribeClientQuotasRequestComponent
		want   []string
	}{
		{"everything", false, nil, []string{"client-id=<default>", "client-id=app", "ip=1.2.3.4", "user=<default>", "user=<default>,client-id=<default>", "user=alice", "user=alice,client-id=app"}},
		{"nothing strict", true, nil, nil},
		{"user alice", false, []kmsg.DescribeClientQuotasRequestComponent{exact("user", "alice")}, []string{"user=alice", "user=alice,client-id=app"}},
		{"user alice strict", true, []kmsg.DescribeClientQuotasRequestComponent{exact("user", "alice")}, []string{"user=alice"}},
		{"default user strict", true, []kmsg.DescribeClientQuotasRequestComponent{def("user")}, []string{"user=<default>"}},
		{"any user strict", true, []kmsg.DescribeClientQuotasRequestComponent{anyOf("user")}, []string{"user=<default>", "user=alice"}},
		{"any client", false, []kmsg.DescribeClientQuotasRequestComponent{anyOf("client-id")}, []string{"client-id=<default>", "client-id=app", "user=<default>,client-id=<default>", "user=alice,client-id=app"}},
		{"user+client exact", true, []kmsg.DescribeClientQuotasRequestComponent{exact("user", "alice"), exact("client-id", "app")}, []string{"user=alice,client-id=app"}},
		{"ips", true, []kmsg.DescribeClientQuotasRequestComponent{anyOf("ip")}, []string{"ip=1.2.3.4"}},
	} {
		resp := describe(t, a, c.strict, c.comps...)
		if resp.ErrorCode != 0 {
			t.Fatalf("%s: error %d", c.name, resp.ErrorCode)
		}
		if got := entities(resp); strings.Join(got, ";") != strings.Join(c.want, ";") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	resp := describe(t, a, false, exact("user", "alice"))
	for _, e := range resp.Entries {
		if len(e.Entity) == 1 && (len(e.Values) != 1 || e.Values[0].Key != "producer_byte_rate" || e.Values[0].Value != 100) {
			t.Errorf("alice's values %+v: the SCRAM key must not be listed", e.Values)
		}
	}
	for _, c := range []struct {
		comps []kmsg.DescribeClientQuotasRequestComponent
		code  int16
		msg   string
	}{
		{[]kmsg.DescribeClientQuotasRequestComponent{anyOf("user"), anyOf("user")}, kerr.InvalidRequest.Code, "Duplicate user filter component entity type"},
		{[]kmsg.DescribeClientQuotasRequestComponent{anyOf("")}, kerr.InvalidRequest.Code, "Unexpected empty filter component entity type"},
		{[]kmsg.DescribeClientQuotasRequestComponent{anyOf("group")}, kerr.UnsupportedVersion.Code, "Custom entity type 'group' not supported"},
		{[]kmsg.DescribeClientQuotasRequestComponent{anyOf("ip"), anyOf("user")}, kerr.InvalidRequest.Code,
			"Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component."},
	} {
		resp := describe(t, a, false, c.comps...)
		if resp.ErrorCode != c.code || resp.ErrorMessage == nil || *resp.ErrorMessage != c.msg || resp.Entries != nil {
			t.Errorf("%+v: %d %v, want %d %q", c.comps, resp.ErrorCode, resp.ErrorMessage, c.code, c.msg)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{10: "10.0", 12.5: "12.5", 1e7: "1.0E7", 1.5e-5: "1.5E-5", 0.001: "0.001", 123456789: "1.23456789E8", 0: "0.0"} {
		if got := jvm.DoubleToString(f); got != want {
			t.Errorf("jvm.DoubleToString(%v) = %q, want %q", f, got, want)
		}
	}
}

// FuzzClientQuotaRequests feeds arbitrary DescribeClientQuotas and
// AlterClientQuotas bodies, decoded by kmsg at every advertised version,
// to the handlers over the in-memory store. Invariants: no panic, every
// decoded request gets a response of its version that encodes, and an
// entry is answered for every AlterClientQuotas entry.
func FuzzClientQuotaRequests(f *testing.F) {
	d := kmsg.NewPtrDescribeClientQuotasRequest()
	d.Version = 1
	d.Components = []kmsg.DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 0, Match: sp("alice")}, {EntityType: "client-id", MatchType: 2}}
	f.Add(int16(48), int16(1), d.AppendTo(nil))
	d.Version = 0
	f.Add(int16(48), int16(0), d.AppendTo(nil))
	al := kmsg.NewPtrAlterClientQuotasRequest()
	al.Version = 1
	al.Entries = []kmsg.AlterClientQuotasRequestEntry{{Entity: quotaEntity(sp("user"), nil, sp("client-id"), sp("c")),
		Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("producer_byte_rate", 1024, false), alterOp("request_percentage", 0, true)}},
		{Entity: quotaEntity(sp("ip"), sp("127.0.0.1")), Ops: []kmsg.AlterClientQuotasRequestEntryOp{alterOp("connection_creation_rate", -1, false)}}}
	f.Add(int16(49), int16(1), al.AppendTo(nil))
	al.Version = 0
	f.Add(int16(49), int16(0), al.AppendTo(nil))
	s := newFakeQuotaStore()
	a := newQuotaApis(f, s)
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		if key != 48 && key != 49 {
			return
		}
		minV, maxV, ok := a.Versions(key)
		if !ok || version < minV || version > maxV {
			return
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return
		}
		if ar, ok := req.(*kmsg.AlterClientQuotasRequest); ok {
			// Host lookups would make the fuzzer slow; addresses only.
			for i := range ar.Entries {
				for j := range ar.Entries[i].Entity {
					if e := &ar.Entries[i].Entity[j]; e.Type == "ip" && e.Name != nil {
						e.Name = sp("10.0.0.1")
					}
				}
			}
		}
		resp, err := a.Handle(context.Background(), &network.Request{Key: key, Version: version, Body: req, Listener: "PLAINTEXT"})
		if err != nil {
			t.Fatalf("handler error: %v", err)
		}
		if resp.GetVersion() != version {
			t.Fatalf("response version %d for %d", resp.GetVersion(), version)
		}
		_ = resp.AppendTo(nil)
		if ar, ok := req.(*kmsg.AlterClientQuotasRequest); ok && len(resp.(*kmsg.AlterClientQuotasResponse).Entries) != len(ar.Entries) {
			t.Fatal("an entry went unanswered")
		}
	})
}
