package security

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseJaasConfigProperty(t *testing.T) {
	// The shape of Kafka's documentation examples, plus comments, single
	// quotes and escapes that Java's StreamTokenizer reads.
	v := `org.apache.kafka.common.security.plain.PlainLoginModule required
	    // the broker's own login
	    username="admin" password="admin-secret" /* users: */
	    user_admin="admin-secret" user_alice='al"ice' user_bob="b\"o\\b\n" user_x=plain-word$1;`
	es, err := ParseJaasConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].LoginModule != PlainLoginModule || es[0].Flag != "REQUIRED" {
		t.Fatalf("entries %+v", es)
	}
	want := map[string]string{"username": "admin", "password": "admin-secret", "user_admin": "admin-secret",
		"user_alice": `al"ice`, "user_bob": "b\"o\\b\n", "user_x": "plain-word$1"}
	for k, w := range want {
		if es[0].Options[k] != w {
			t.Errorf("%s = %q, want %q", k, es[0].Options[k], w)
		}
	}
	c := &JaasContext{Entries: es}
	users := c.PlainUsers()
	if len(users) != 4 || users["alice"] != `al"ice` || users["admin"] != "admin-secret" {
		t.Fatalf("users %v", users)
	}
	if u, p, err := c.Login(MechanismPlain); err != nil || u != "admin" || p != "admin-secret" {
		t.Fatalf("login %q %q %v", u, p, err)
	}
	if _, _, err := c.Login(MechanismScramSHA512); err == nil {
		t.Fatal("SCRAM login from a PlainLoginModule entry")
	}

	for _, flag := range []string{"requisite", "Sufficient", "OPTIONAL"} {
		es, err := ParseJaasConfig(ScramLoginModule + " " + flag + ";")
		if err != nil || es[0].Flag != strings.ToUpper(flag) || len(es[0].Options) != 0 {
			t.Errorf("%s: %+v %v", flag, es, err)
		}
	}
}

func TestParseJaasConfigErrors(t *testing.T) {
	for v, want := range map[string]string{
		"":                                         "Login module not specified",
		"  // only a comment\n":                    "Login module not specified",
		PlainLoginModule:                           "control flag not specified",
		PlainLoginModule + " mandatory;":           "Invalid login module control flag 'mandatory'",
		PlainLoginModule + ` required a="b"`:       "not terminated by semi-colon",
		PlainLoginModule + " required a=;":         "Value not specified for key 'a'",
		PlainLoginModule + " required a;":          "Value not specified for key 'a'",
		PlainLoginModule + ` required a="b;`:       "unterminated quoted string",
		PlainLoginModule + " required /* a=b;":     "unterminated /* comment",
		PlainLoginModule + " required = b;":        "expected an option name",
		`"quoted.Module" required;`:                "expected a login module class",
		PlainLoginModule + " required a=\"b\nc\";": "unterminated quoted string",
	} {
		if _, err := ParseJaasConfig(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", v, err, want)
		}
	}
}

const jaasFile = `
// Kafka's documented broker JAAS file, with a listener-specific section.
KafkaServer {
    org.apache.kafka.common.security.scram.ScramLoginModule required
        username="admin"
        password="admin-secret";
    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin"
        password="admin-secret"
        user_admin="admin-secret"
        user_alice="alice-secret";
};

sasl_plaintext.KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="broker" password="broker-secret" user_broker="broker-secret";
};

/* ZooKeeper client login: not the broker's server context. */
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka" password="kafka-secret";
};
`

func writeJaas(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kafka_server_jaas.conf")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseJaasFile(t *testing.T) {
	secs, err := ParseJaasFile(jaasFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 3 || len(secs["KafkaServer"]) != 2 || len(secs["sasl_plaintext.KafkaServer"]) != 1 || len(secs["Client"]) != 1 {
		t.Fatalf("sections %v", secs)
	}
	if secs["Client"][0].Options["password"] != "kafka-secret" {
		t.Fatalf("client %+v", secs["Client"])
	}
	for in, want := range map[string]string{
		"KafkaServer { " + PlainLoginModule + " required; }": "expected ';' after the '}'",
		"KafkaServer " + PlainLoginModule + " required; };":  "expected '{'",
		"KafkaServer { " + PlainLoginModule + " required; ":  "not closed",
		"KafkaServer { };": "no login modules",
		"KafkaServer { " + PlainLoginModule + " required a }": "Value not specified",
	} {
		if _, err := ParseJaasFile(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// The server context is looked up as Kafka's JaasContext.loadServerContext
// does: the listener- and mechanism-prefixed property, then (Klassik)
// sasl.jaas.config, then <listener>.KafkaServer, then KafkaServer.
func TestServerJaasResolution(t *testing.T) {
	file := writeJaas(t, jaasFile)
	prop := map[string]string{"sasl_ssl.plain": PlainLoginModule + ` required user_carol="c";`}
	j := NewServerJaas(JaasSources{
		ListenerMechanism: func(l, m string) (string, bool) { v, ok := prop[l+"."+m]; return v, ok },
		File:              file,
	})
	c, err := j.Context("SASL_SSL", "PLAIN")
	if err != nil || c.Source != "listener.name.sasl_ssl.plain.sasl.jaas.config" || c.PlainUsers()["carol"] != "c" {
		t.Fatalf("prefixed: %+v %v", c, err)
	}
	c, err = j.Context("SASL_PLAINTEXT", "PLAIN")
	if err != nil || c.Name != "sasl_plaintext.KafkaServer" || c.PlainUsers()["broker"] != "broker-secret" {
		t.Fatalf("listener section: %+v %v", c, err)
	}
	c, err = j.Context("OTHER", "SCRAM-SHA-512")
	if err != nil || c.Name != "KafkaServer" {
		t.Fatalf("global section: %+v %v", c, err)
	}
	if u, p, err := c.Login(MechanismScramSHA512); u != "admin" || p != "admin-secret" || err != nil {
		t.Fatalf("scram login %q %q %v", u, p, err)
	}

	g := NewServerJaas(JaasSources{Global: ScramLoginModule + ` required username="x" password="y";`, File: file})
	if c, err := g.Context("SASL_PLAINTEXT", "SCRAM-SHA-256"); err != nil || c.Source != "sasl.jaas.config" {
		t.Fatalf("global property: %+v %v", c, err)
	}

	none := NewServerJaas(JaasSources{})
	if _, err := none.Context("SASL_PLAINTEXT", "PLAIN"); err == nil || !strings.Contains(err.Error(), "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry") || !strings.Contains(err.Error(), "is not set") {
		t.Fatalf("missing: %v", err)
	}
	missing := NewServerJaas(JaasSources{File: filepath.Join(t.TempDir(), "nope.conf")})
	if _, err := missing.Context("SASL_PLAINTEXT", "PLAIN"); err == nil || !strings.Contains(err.Error(), JavaLoginConfigProperty) {
		t.Fatalf("missing file: %v", err)
	}
	two := NewServerJaas(JaasSources{Global: PlainLoginModule + " required; " + ScramLoginModule + " required;"})
	if _, err := two.Context("SASL_PLAINTEXT", "PLAIN"); err == nil || !strings.Contains(err.Error(), "contains 2 login modules, should be 1 module") {
		t.Fatalf("two modules: %v", err)
	}
	krb := NewServerJaas(JaasSources{Global: `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`})
	if _, err := krb.Context("SASL_PLAINTEXT", "PLAIN"); err == nil || !strings.Contains(err.Error(), "Krb5LoginModule is not supported") {
		t.Fatalf("kerberos: %v", err)
	}
	badFile := NewServerJaas(JaasSources{File: writeJaas(t, "KafkaServer { com.example.Custom required; };")})
	if _, err := badFile.Context("SASL_PLAINTEXT", "PLAIN"); err == nil || !strings.Contains(err.Error(), "com.example.Custom is not supported") {
		t.Fatalf("custom module in file: %v", err)
	}
}

// FuzzParseJaas: neither parser panics, and a parsed property value has at
// least one entry with a known flag.
func FuzzParseJaas(f *testing.F) {
	f.Add(jaasFile)
	f.Add(PlainLoginModule + ` required user_a="b\"c" x='y';`)
	f.Add("a b /* c")
	f.Add(`"\777`)
	f.Fuzz(func(t *testing.T, s string) {
		if es, err := ParseJaasConfig(s); err == nil {
			if len(es) == 0 {
				t.Fatal("no entries without an error")
			}
			for _, e := range es {
				switch e.Flag {
				case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
				default:
					t.Fatalf("flag %q", e.Flag)
				}
			}
		}
		_, _ = ParseJaasFile(s)
	})
}
