package broker_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// A credential for "alice@example.com" (password "alice-secret"), as
// Kafka 2.8's kafka-configs writes it: the stored form of
// ScramCredentialUtils with a fixed salt (the golden value of
// broker/security's test).
const (
	aliceSHA256 = "salt=MWMzeGJ2cHVrM20yeDV2c2JiYzhqcW15cWs=,stored_key=kpyK0MPYyeJ3mnlpD6JcU1600vWBEyBxa4UFum6yR+I=,server_key=t7xwbY+ePMwl4vJAWJtTD9m31LdjDLWZcKY/v4u3oYs=,iterations=8192"
	aliceSHA512 = "salt=NW5yaXZxcmRzM2QyemhtOWRoNndubW56dw==,stored_key=pcWvA4Bf9/sCY2CkyiTHCNTIOLN8RA46IldT40ct3W5OMBKxDACFKHI3bhdY+RYdlS+2KZ8+10XBXwI6/paD6w==,server_key=EBFq/cE/LLd8DoXLkHdBd6yqGUt6dhZfzOUvGlIgIp1GtIes+oiMhuJyMNCFjgABs4udQlN7qxfI2H+HJibH6A==,iterations=4096"
)

// waitCredential waits until every broker's cache holds want (nil: no
// credential) for user and mechanism.
func waitCredential(t *testing.T, c *testcluster.Cluster, mech, user string, want *string, what string) {
	t.Helper()
	c.WaitFor(15*time.Second, what, func() bool {
		for i := 0; i < c.N(); i++ {
			got, ok := c.Broker(i).Credentials().Get(mech, user)
			if want == nil {
				if ok {
					return false
				}
				continue
			}
			if !ok || got.String() != *want {
				return false
			}
		}
		return true
	})
}

// scramLogin opens a new SASL_PLAINTEXT connection to every broker as
// user and checks that a Metadata request answers (want nil) or fails
// with want.
func scramLogin(t *testing.T, c *testcluster.Cluster, mech, user, password string, want error) {
	t.Helper()
	m := scram.Auth{User: user, Pass: password}.AsSha256Mechanism()
	if mech == security.MechanismScramSHA512 {
		m = scram.Auth{User: user, Pass: password}.AsSha512Mechanism()
	}
	for i := 0; i < c.N(); i++ {
		a := c.Broker(i).BoundAddr("SASL_PLAINTEXT")
		if a == nil {
			t.Fatal("no SASL_PLAINTEXT listener")
		}
		cl := c.Client(kgo.SeedBrokers(a.String()), kgo.SASL(m), kgo.RequestRetries(0))
		_, err := cl.Request(ctxT(t, 20*time.Second), kmsg.NewPtrMetadataRequest())
		cl.Close()
		if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
			t.Fatalf("%s login of %s at broker %d: %v, want %v", mech, user, c.BrokerID(i), err, want)
		}
	}
}

// writeKafkaChange creates a change notification with Kafka's bytes.
func writeKafkaChange(t *testing.T, z *zkclient.Client, entityPath string) {
	t.Helper()
	if _, err := z.Create("/config/changes/config_change_", []byte(`{"version":2,"entity_path":"`+entityPath+`"}`), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
}

// TestScramCredentialsFromZooKeeper: the SCRAM credentials Kafka's tools
// write straight into /config/users/<user>, announced by a change
// notification, reach every broker's credential cache without a restart;
// a changed credential replaces the old one, a deleted node removes it; a
// node written without notification is read at start-up; notifications of
// entity types without a handler and of quota-only user entities change
// nothing and do not stop the listener. Every broker lets the user log in
// with exactly the mechanisms the node holds, for new connections.
func TestScramCredentialsFromZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Overrides: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	}})
	z := c.ZK()
	const user, node = "alice@example.com", "/config/users/alice%40example.com"
	sha256, sha512 := aliceSHA256, aliceSHA512

	// New user: a credential and a quota in one node.
	if _, err := z.Create(node, []byte(`{"version":1,"config":{"SCRAM-SHA-256":"`+sha256+`","producer_byte_rate":"1048576"}}`), 0); err != nil {
		t.Fatal(err)
	}
	writeKafkaChange(t, z, "users/alice%40example.com")
	waitCredential(t, c, security.MechanismScramSHA256, user, &sha256, "alice's SCRAM-SHA-256 credential on every broker")
	cred, _ := c.Broker(1).Credentials().Get(security.MechanismScramSHA256, user)
	if !security.VerifyScramPassword(security.MechanismScramSHA256, "alice-secret", cred) {
		t.Fatal("the cached credential does not verify alice's password")
	}
	scramLogin(t, c, security.MechanismScramSHA256, user, "alice-secret", nil)

	// Notifications the listener must skip: a broker config, a <user,
	// client> quota, the default user, garbage. Then a changed credential
	// set (SHA-256 replaced by SHA-512) must still arrive.
	writeKafkaChange(t, z, "brokers/1")
	writeKafkaChange(t, z, "users/alice%40example.com/clients/app")
	writeKafkaChange(t, z, "users/<default>")
	if _, err := z.Create("/config/changes/config_change_", []byte("not json"), zkclient.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Set(node, []byte(`{"version":1,"config":{"SCRAM-SHA-512":"`+sha512+`","producer_byte_rate":"1048576"}}`), -1); err != nil {
		t.Fatal(err)
	}
	writeKafkaChange(t, z, "users/alice%40example.com")
	waitCredential(t, c, security.MechanismScramSHA512, user, &sha512, "alice's SCRAM-SHA-512 credential on every broker")
	waitCredential(t, c, security.MechanismScramSHA256, user, nil, "alice's SCRAM-SHA-256 credential gone from every broker")
	scramLogin(t, c, security.MechanismScramSHA512, user, "alice-secret", nil)
	scramLogin(t, c, security.MechanismScramSHA256, user, "alice-secret", kerr.SaslAuthenticationFailed)

	// Deleted node: no credential left.
	if err := z.Delete(node, -1); err != nil {
		t.Fatal(err)
	}
	writeKafkaChange(t, z, "users/alice%40example.com")
	waitCredential(t, c, security.MechanismScramSHA512, user, nil, "alice's credentials gone from every broker")
	scramLogin(t, c, security.MechanismScramSHA512, user, "alice-secret", kerr.SaslAuthenticationFailed)

	// Start-up load: a node with no notification is read by a restarted
	// broker.
	if _, err := z.Create("/config/users/carol", []byte(`{"version":1,"config":{"SCRAM-SHA-256":"`+sha256+`"}}`), 0); err != nil {
		t.Fatal(err)
	}
	c.RestartBroker(1)
	if got, ok := c.Broker(1).Credentials().Get(security.MechanismScramSHA256, "carol"); !ok || got.String() != sha256 {
		t.Fatalf("after a restart broker %d has carol's credential %v (%s)", c.BrokerID(1), ok, got)
	}
}

// TestUserScramCredentialAPIs drives DescribeUserScramCredentials and
// AlterUserScramCredentials with franz-go's kadm against a 2-broker
// cluster: upserts land in ZooKeeper in Kafka's shape (a quota beside
// them untouched) and in every broker's cache; Kafka's validation codes;
// NOT_CONTROLLER from a broker that is not the controller.
func TestUserScramCredentialAPIs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	adm := c.Admin()
	ctx := ctxT(t, 60*time.Second)
	z := c.ZK()
	if _, err := z.Create("/config/users/bob", []byte(`{"version":1,"config":{"consumer_byte_rate":"2048"}}`), 0); err != nil {
		t.Fatal(err)
	}

	altered, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "bob", Mechanism: kadm.ScramSha256, Iterations: 8192, Password: "bob-secret"},
		{User: "bob", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "bob-secret"},
		{User: "dave", Mechanism: kadm.ScramSha512, Iterations: 16384, Password: "dave-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"bob", "dave"} {
		if r := altered[u]; r.Err != nil {
			t.Fatalf("alter %s: %v %s", u, r.Err, r.ErrMessage)
		}
	}
	data, _, err := z.Get("/config/users/bob")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.HasPrefix(s, `{"version":1,"config":{"SCRAM-SHA-512":"salt=`) || !strings.Contains(s, `"SCRAM-SHA-256":"salt=`) ||
		!strings.HasSuffix(s, `,"consumer_byte_rate":"2048"}}`) || !strings.Contains(s, ",iterations=8192\"") {
		t.Fatalf("/config/users/bob = %s", s)
	}
	c.WaitFor(15*time.Second, "bob's and dave's credentials on every broker", func() bool {
		for i := 0; i < c.N(); i++ {
			cc := c.Broker(i).Credentials()
			b256, ok1 := cc.Get(security.MechanismScramSHA256, "bob")
			d512, ok2 := cc.Get(security.MechanismScramSHA512, "dave")
			if !ok1 || !ok2 || !security.VerifyScramPassword(security.MechanismScramSHA256, "bob-secret", b256) ||
				!security.VerifyScramPassword(security.MechanismScramSHA512, "dave-secret", d512) {
				return false
			}
		}
		return true
	})

	described, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 2 || len(described["bob"].CredInfos) != 2 ||
		described["bob"].CredInfos[0] != (kadm.CredInfo{Mechanism: kadm.ScramSha256, Iterations: 8192}) ||
		described["bob"].CredInfos[1] != (kadm.CredInfo{Mechanism: kadm.ScramSha512, Iterations: 4096}) ||
		described["dave"].CredInfos[0] != (kadm.CredInfo{Mechanism: kadm.ScramSha512, Iterations: 16384}) {
		t.Fatalf("describe all: %+v", described)
	}

	// Named users, raw, to see Kafka's per-user codes and messages in order.
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range []string{"dave", "nobody", "", "bob", "bob"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		dreq.Users = append(dreq.Users, u)
	}
	dresp, err := dreq.RequestWith(ctx, c.Direct(0))
	if err != nil {
		t.Fatal(err)
	}
	type res struct {
		user string
		code int16
		msg  string
	}
	var got []res
	for _, r := range dresp.Results {
		m := ""
		if r.ErrorMessage != nil {
			m = *r.ErrorMessage
		}
		got = append(got, res{r.User, r.ErrorCode, m})
	}
	want := []res{
		{"dave", 0, ""},
		{"nobody", kerr.ResourceNotFound.Code, "Attempt to describe a user credential that does not exist: nobody"},
		{"", kerr.ResourceNotFound.Code, "Username must not be empty"},
		{"bob", kerr.DuplicateResource.Code, "Cannot describe SCRAM credentials for the same user twice in a single request: bob"},
	}
	if len(got) != len(want) {
		t.Fatalf("describe named: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("describe named result %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// Validation, one request with salts and salted passwords as sent.
	salt := []byte("somesalt")
	sp := make([]byte, 32)
	areq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(name string, mech int8, iter int32) {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = name, mech, iter, salt, sp
		areq.Upsertions = append(areq.Upsertions, u)
	}
	del := func(name string, mech int8) {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = name, mech
		areq.Deletions = append(areq.Deletions, d)
	}
	up("few", 1, 4095)
	up("many", 2, 16385)
	up("mech", 3, 4096)
	up("", 1, 4096)
	up("twice", 1, 4096)
	up("twice", 1, 8192)
	del("ghost", 2)
	del("dave", 2) // legal: dave loses his only credential
	codes := map[string]int16{}
	msgs := map[string]string{}
	c.WaitFor(15*time.Second, "the controller to answer AlterUserScramCredentials", func() bool {
		ctrl, ok := c.Controller()
		if !ok {
			return false
		}
		aresp, err := areq.RequestWith(ctx, c.Direct(c.Index(ctrl)))
		if err != nil {
			return false
		}
		for _, r := range aresp.Results {
			codes[r.User] = r.ErrorCode
			if r.ErrorMessage != nil {
				msgs[r.User] = *r.ErrorMessage
			}
		}
		return codes["dave"] != kerr.NotController.Code
	})
	wantCodes := map[string]struct {
		code int16
		msg  string
	}{
		"few":   {kerr.UnacceptableCredential.Code, "Too few iterations"},
		"many":  {kerr.UnacceptableCredential.Code, "Too many iterations"},
		"mech":  {kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"},
		"":      {kerr.UnacceptableCredential.Code, "Username must not be empty"},
		"twice": {kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request"},
		"ghost": {kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"},
		"dave":  {0, ""},
	}
	if len(codes) != len(wantCodes) {
		t.Errorf("alter results %v %v", codes, msgs)
	}
	for u, w := range wantCodes {
		if codes[u] != w.code || msgs[u] != w.msg {
			t.Errorf("alter %q: %d %q, want %d %q", u, codes[u], msgs[u], w.code, w.msg)
		}
	}
	waitCredential(t, c, security.MechanismScramSHA512, "dave", nil, "dave's credential gone from every broker")
	if _, _, err := z.Get("/config/users/dave"); err == nil {
		t.Error("/config/users/dave still exists with no keys left")
	}
	if _, _, err := z.Get("/config/users/few"); err == nil {
		t.Error("a refused user got a node")
	}

	// The broker that is not the controller refuses, naming every user.
	ctrl, _ := c.Controller()
	other := 1 - c.Index(ctrl)
	nreq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	nu := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	nu.Name, nu.Mechanism, nu.Iterations, nu.Salt, nu.SaltedPassword = "zed", 1, 4096, salt, sp
	nreq.Upsertions = append(nreq.Upsertions, nu)
	nd := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	nd.Name, nd.Mechanism = "amy", 1
	nreq.Deletions = append(nreq.Deletions, nd)
	nresp, err := nreq.RequestWith(ctx, c.Direct(other))
	if err != nil {
		t.Fatal(err)
	}
	if len(nresp.Results) != 2 || nresp.Results[0].User != "amy" || nresp.Results[1].User != "zed" ||
		nresp.Results[0].ErrorCode != kerr.NotController.Code || nresp.Results[1].ErrorCode != kerr.NotController.Code {
		t.Fatalf("non-controller answered %+v", nresp.Results)
	}

	// The salted password the client sent is what the broker stored from.
	f, _ := security.NewScramFormatter(security.MechanismScramSHA256)
	want256 := f.CredentialFromSaltedPassword(salt, sp, 4096)
	ureq := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	uu := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	uu.Name, uu.Mechanism, uu.Iterations, uu.Salt, uu.SaltedPassword = "eve", 1, 4096, salt, sp
	ureq.Upsertions = append(ureq.Upsertions, uu)
	if _, err := ureq.RequestWith(ctx, c.Direct(c.Index(ctrl))); err != nil {
		t.Fatal(err)
	}
	data, _, err = z.Get("/config/users/eve")
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"version":1,"config":{"SCRAM-SHA-256":"` + want256.String() + `"}}`; string(data) != w {
		t.Fatalf("/config/users/eve = %s\nwant %s", data, w)
	}
	if !strings.Contains(string(data), "salt="+base64.StdEncoding.EncodeToString(salt)+",") {
		t.Fatal("salt not stored as sent")
	}
}
