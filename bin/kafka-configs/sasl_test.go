package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/broker/testcluster"
)

// TestCreatedUserLogsIn: a user created with kafka-configs.sh --zookeeper
// logs in with SCRAM-SHA-512 from franz-go on a SASL_PLAINTEXT listener
// and produces, and kafka-configs.sh logs in as carol with --command-config;
// after kafka-configs.sh --bootstrap-server deletes the
// credential, a new connection is refused with SASL_AUTHENTICATION_FAILED.
func TestCreatedUserLogsIn(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Overrides: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required;`,
	}})
	zkc := c.ZKConnect()
	bs := strings.Join(c.Bootstrap(), ",")
	a := c.Broker(0).BoundAddr("SASL_PLAINTEXT")
	if a == nil {
		t.Fatal("no SASL_PLAINTEXT listener")
	}
	saslAddr := a.String()
	c.CreateTopic("secured", 1, 1, nil)

	kc(t, 0, zkWarning+"Completed updating config for entity: user-principal 'carol'.\n", "",
		"--zookeeper", zkc, "--alter", "--entity-type", "users", "--entity-name", "carol",
		"--add-config", "SCRAM-SHA-512=[iterations=8192,password=carol-secret]")
	waitCached(t, c, security.MechanismScramSHA512, "carol", "carol-secret")

	login := func() *kgo.Client {
		return c.Client(kgo.SeedBrokers(saslAddr), kgo.RequestRetries(0),
			kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha512Mechanism()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := login().ProduceSync(ctx, &kgo.Record{Topic: "secured", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("carol produces over SASL_PLAINTEXT with SCRAM-SHA-512: %v", err)
	}

	// The tool itself over the SASL listener, logged in as carol with
	// Kafka's --command-config properties.
	cmdCfg := filepath.Join(t.TempDir(), "carol.properties")
	if err := os.WriteFile(cmdCfg, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"carol\" password=\"carol-secret\";\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc(t, 0, "SCRAM credential configs for user-principal 'carol' are SCRAM-SHA-512=iterations=8192\n", "",
		"--bootstrap-server", saslAddr, "--command-config", cmdCfg, "--describe", "--entity-type", "users", "--entity-name", "carol")

	kc(t, 0, "Completed updating config for user carol.\n", "",
		"--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "carol", "--delete-config", "SCRAM-SHA-512")
	waitCached(t, c, security.MechanismScramSHA512, "carol", "")
	_, err := login().Request(ctx, kmsg.NewPtrMetadataRequest())
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a new connection of the deleted user: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}
