package zkpaths

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// seedAll adds every golden file plus a few hostile inputs as seeds.
func seedAll(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(goldenDir, "*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "null", "{}", "[]", `{"version":null}`, `{"partitions":{"-1":[1]}}`,
		`{"version":2,"entity_path":"/"}`, `{"endpoints":["://:"],"version":5,"jmx_port":1}`, "\xff\xfe", `"1"`} {
		f.Add([]byte(s))
	}
}

// Fuzz invariants for every decoder: it never panics, and whatever it
// accepts re-encodes to bytes that decode to the same value (so a node we
// rewrite keeps its meaning).

// fuzzRoundTrip checks those invariants on one node type. prepare readies a
// decoded value for re-encoding (the version a rewrite uses) and reports
// false for one that cannot round-trip in general; same compares the value
// with its re-decoded copy.
func fuzzRoundTrip[T interface{ Encode() []byte }](f *testing.F, decode func([]byte) (T, error), prepare func(*T) bool, same func(a, b T) bool) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(b)
		if err != nil || !prepare(&v) {
			return
		}
		v2, err := decode(v.Encode())
		if err != nil {
			t.Fatalf("re-decode of %s: %v", v.Encode(), err)
		}
		if !same(v, v2) {
			t.Fatalf("round trip changed %+v to %+v", v, v2)
		}
	})
}

func FuzzDecodeBrokerInfo(f *testing.F) {
	fuzzRoundTrip(f, func(b []byte) (BrokerInfo, error) { return DecodeBrokerInfo(1, b) },
		// v1-v3 cannot express listener names other than protocol
		// names, so only v4+ registrations round-trip in general.
		func(v *BrokerInfo) bool { return v.Version >= 4 && v.Version <= 5 },
		func(a, b BrokerInfo) bool { return reflect.DeepEqual(a.Endpoints, b.Endpoints) })
}

func FuzzDecodeTopicAssignment(f *testing.F) {
	fuzzRoundTrip(f, DecodeTopicAssignment,
		func(v *TopicAssignment) bool { v.Version = 3; return true },
		func(a, b TopicAssignment) bool {
			return reflect.DeepEqual(a.Partitions, b.Partitions) && a.TopicID == b.TopicID
		})
}

func FuzzDecodeLeaderAndIsr(f *testing.F) {
	fuzzRoundTrip(f, func(b []byte) (LeaderAndIsr, error) { return DecodeLeaderAndIsr(b, 0) },
		func(*LeaderAndIsr) bool { return true }, LeaderAndIsr.Equal)
}

func FuzzDecodeController(f *testing.F) {
	fuzzRoundTrip(f, DecodeController,
		func(v *ControllerInfo) bool { v.Version = 2; return true },
		func(a, b ControllerInfo) bool { return a == b })
}

func FuzzDecodeSmallNodes(f *testing.F) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := DecodeClusterID(b); err == nil {
			if id2, err := DecodeClusterID(EncodeClusterID(id)); err != nil || id2 != id {
				t.Fatalf("cluster id %q: %q %v", id, id2, err)
			}
		}
		if e, err := DecodeControllerEpoch(b); err == nil {
			if e2, _ := DecodeControllerEpoch(EncodeControllerEpoch(e)); e2 != e {
				t.Fatalf("epoch %d vs %d", e, e2)
			}
		}
		if r, err := DecodeReassignment(b); err == nil {
			if r2, err := DecodeReassignment(EncodeReassignment(r)); err != nil || len(r2) != len(r) {
				t.Fatalf("reassignment: %v", err)
			}
		}
		if tps, err := DecodePreferredReplicaElection(b); err == nil {
			if tps2, err := DecodePreferredReplicaElection(EncodePreferredReplicaElection(tps)); err != nil || !reflect.DeepEqual(tps, tps2) {
				t.Fatalf("preferred: %v", err)
			}
		}
		if tps, err := DecodeIsrChangeNotification(b); err == nil {
			if tps2, err := DecodeIsrChangeNotification(EncodeIsrChangeNotification(tps)); err != nil || !reflect.DeepEqual(tps, tps2) {
				t.Fatalf("isr change: %v", err)
			}
		}
		if id, err := DecodeLogDirEventNotification(b); err == nil {
			if id2, _ := DecodeLogDirEventNotification(EncodeLogDirEventNotification(id)); id2 != id {
				t.Fatalf("log dir event")
			}
		}
		if c, err := DecodeEntityConfig(b); err == nil {
			if c2, err := DecodeEntityConfig(EncodeEntityConfig(c)); err != nil || !reflect.DeepEqual(c, c2) {
				t.Fatalf("config: %v vs %v %v", c, c2, err)
			}
		}
		if c, err := DecodeConfigChangeNotification(b); err == nil {
			if c2, err := DecodeConfigChangeNotification(EncodeConfigChangeNotification(ConfigEntityPath(c.EntityType, c.EntityName))); err != nil || c2 != c {
				t.Fatalf("config change: %+v vs %+v %v", c, c2, err)
			}
		}
		if p, err := DecodeProducerIDBlock(b); err == nil {
			if p2, err := DecodeProducerIDBlock(p.Encode()); err != nil || p2 != p {
				t.Fatalf("producer id block")
			}
		}
		if x, err := DecodeFeatureZNode(b); err == nil {
			if x2, err := DecodeFeatureZNode(x.Encode()); err != nil || !reflect.DeepEqual(x, x2) {
				t.Fatalf("feature: %v", err)
			}
		}
		if a, err := DecodeACLs(b); err == nil {
			if a2, err := DecodeACLs(EncodeACLs(a)); err != nil || len(a2) != len(a) || (len(a) > 0 && !reflect.DeepEqual(a, a2)) {
				t.Fatalf("acls: %v", err)
			}
		}
		if r, err := DecodeConsumerRegistration(b); err == nil {
			if _, err := DecodeConsumerRegistration(r.Encode()); err != nil {
				t.Fatalf("consumer registration: %v", err)
			}
		}
		if o, err := DecodeConsumerOffset(b); err == nil {
			if o2, _ := DecodeConsumerOffset(EncodeConsumerOffset(o)); o2 != o {
				t.Fatalf("offset")
			}
		}
		_, _ = DecodeMigrationState(b)
		if typ, name, err := DecodeLiteralACLChange(b); err == nil {
			if typ2, name2, err := DecodeLiteralACLChange(EncodeLiteralACLChange(typ, name)); err != nil || typ2 != typ || name2 != name {
				t.Fatalf("literal acl change")
			}
		}
		if e, err := DecodeExtendedACLChange(b); err == nil {
			if e2, err := DecodeExtendedACLChange(e.Encode()); err != nil || e2 != e {
				t.Fatalf("extended acl change")
			}
		}
		if d, err := DecodeDelegationToken(b); err == nil {
			d.Version = 3
			if d2, err := DecodeDelegationToken(d.Encode()); err != nil || d2.TokenID != d.TokenID || d2.TokenRequester != d.TokenRequester {
				t.Fatalf("delegation token: %v", err)
			}
		}
	})
}

// The fast state decoder accepts only what the general one accepts, with
// the same result, and accepts everything Encode writes.
func FuzzDecodeLeaderAndIsrFast(f *testing.F) {
	seedAll(f)
	for _, s := range []string{`{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":0,"isr":[]}`,
		`{"controller_epoch":1,"leader":1,"version":1,"leader_recovery_state":1,"leader_epoch":2147483647,"isr":[1,-2,3]}`,
		`{"isr":[1],"leader_epoch":-0,"leader":2,"controller_epoch":3}`, `{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[1],"leader":2}`,
		`{"controller_epoch":1,"leader":2147483648,"leader_epoch":0,"isr":[1]}`, `{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[01]}`,
		`{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[1],"leader_recovery_state":2}`, `{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":[1]} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeLeaderAndIsrFast(b, 7)
		if ok {
			slow, err := decodeLeaderAndIsrJSON(b, 7)
			if err != nil {
				t.Fatalf("fast decoder accepted %q, the general one rejects it: %v", b, err)
			}
			if !fast.Equal(slow) || fast.ZkVersion != slow.ZkVersion || fast.ISR == nil {
				t.Fatalf("%q: fast decoder %+v, general %+v", b, fast, slow)
			}
		}
		// Whatever the general decoder accepts, re-encoded, takes the fast path.
		if slow, err := decodeLeaderAndIsrJSON(b, 7); err == nil {
			enc := slow.Encode()
			again, ok := decodeLeaderAndIsrFast(enc, 7)
			if !ok || !again.Equal(slow) {
				t.Fatalf("%s (from %q) does not take the fast path (%v) or changed: %+v", enc, b, ok, again)
			}
		}
	})
}
