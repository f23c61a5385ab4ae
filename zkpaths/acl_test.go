package zkpaths

import (
	"reflect"
	"strings"
	"testing"
)

// The example of AclEntry.fromBytes' comment, with its spacing: what a
// Kafka broker or kafka-acls.sh leaves in /kafka-acl/Topic/<name>.
const kafkaACLExample = `{
        "version": 1,
        "acls": [
          {
            "host":"host1",
            "permissionType": "Deny",
            "operation": "Read",
            "principal": "User:alice"
          }
        ]
      }`

func TestDecodeACLs(t *testing.T) {
	got, err := DecodeACLs([]byte(kafkaACLExample))
	want := []ACLEntry{{Principal: "User:alice", PermissionType: "Deny", Operation: "Read", Host: "host1"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Kafka's example: %+v %v", got, err)
	}
	if got := string(EncodeACLs(want)); got != `{"version":1,"acls":[{"principal":"User:alice","permissionType":"Deny","operation":"Read","host":"host1"}]}` {
		t.Fatalf("encode: %s", got)
	}
	// Empty data is no ACLs (fromBytes returns the empty set); unknown
	// fields are ignored; unknown operation names are kept for the
	// authorizer to map to UNKNOWN.
	for _, ok := range []string{"", `{"version":1,"acls":[]}`,
		`{"version":1,"acls":[{"principal":"User:","permissionType":"Allow","operation":"Fly","host":"*","x":1}],"extra":true}`} {
		if _, err := DecodeACLs([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for in, msg := range map[string]string{
		`{"acls":[]}`:                 "version must be the integer 1",
		`{"version":2,"acls":[]}`:     "version must be the integer 1",
		`{"version":"1","acls":[]}`:   "version must be the integer 1",
		`{"version":1.0,"acls":[]}`:   "version must be the integer 1",
		`{"version":1}`:               "missing acls array",
		`{"version":1,"acls":null}`:   "missing acls array",
		`{"version":1,"acls":[null]}`: "not an object",
		`{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read"}]}`:           "needs principal",
		`{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","operation":"Read","host":"*"}]}`: "principalType:principalName",
		`{"version":1,"acls":[{"principal":7,"permissionType":"Allow","operation":"Read","host":"*"}]}`:       "not an object of strings",
		`not json`: "acls",
	} {
		if _, err := DecodeACLs([]byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", in, err, msg)
		}
	}
}

func TestACLPaths(t *testing.T) {
	cases := map[string]string{
		ACLStorePath("LITERAL"):                                "/kafka-acl",
		ACLStorePath("PREFIXED"):                               "/kafka-acl-extended/prefixed",
		ACLResourceTypePath("PREFIXED", "Group"):               "/kafka-acl-extended/prefixed/Group",
		ACLResourcePath("LITERAL", "Cluster", "kafka-cluster"): "/kafka-acl/Cluster/kafka-cluster",
		ACLChangeSeqPath("LITERAL"):                            "/kafka-acl-changes/acl_changes_",
		ACLChangeSeqPath("PREFIXED"):                           "/kafka-acl-extended-changes/acl_changes_",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("path %q, want %q", got, want)
		}
	}
}

// FuzzDecodeACLs: DecodeACLs never panics, and what it accepts re-encodes
// to a node that decodes to the same entries.
func FuzzDecodeACLs(f *testing.F) {
	for _, s := range []string{kafkaACLExample, `{"version":1,"acls":[]}`, `{"version":1,"acls":[{}]}`,
		`{"version":1,"acls":[{"principal":"User:a\u0000","permissionType":"Allow","operation":"Read","host":"*"}]}`,
		`{"version":1,"acls":[{"principal":"User:\xff","permissionType":"Allow","operation":"Read","host":"*"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeACLs(b)
		if err != nil {
			return
		}
		a2, err := DecodeACLs(EncodeACLs(a))
		if err != nil || len(a2) != len(a) {
			t.Fatalf("round trip: %v", err)
		}
		for i := range a {
			if strings.ToValidUTF8(a[i].Principal, "\uFFFD") == a2[i].Principal && a2[i].Host == strings.ToValidUTF8(a[i].Host, "\uFFFD") {
				continue
			}
			t.Fatalf("entry %d: %+v became %+v", i, a[i], a2[i])
		}
	})
}
