package security

import (
	"fmt"
	"os"
	"strings"

	brokersecurity "github.com/klassik/klassik/broker/security"
)

// kafkaClientContext is the JAAS file section clients read (Kafka's
// GLOBAL_CONTEXT_NAME_CLIENT).
const kafkaClientContext = "KafkaClient"

// login is the client's SASL identity.
type login struct{ username, password string }

// clientLogin reads the one login module of jaasConfig (sasl.jaas.config)
// or, when that is empty, of the KafkaClient section of the JAAS file
// that -Djava.security.auth.login.config in KAFKA_OPTS names, as Kafka's
// JaasContext.loadClientContext does. The syntax is broker/security's
// JAAS parser's, the brokers' own. PlainLoginModule and ScramLoginModule
// both put the username and password into the login's subject, whichever
// mechanism then runs, so either serves PLAIN and SCRAM.
func clientLogin(jaasConfig string) (login, error) {
	var mods []brokersecurity.LoginModuleEntry
	if strings.TrimSpace(jaasConfig) != "" {
		var err error
		if mods, err = brokersecurity.ParseJaasConfig(jaasConfig); err != nil {
			return login{}, fmt.Errorf("Invalid value for configuration sasl.jaas.config: %v", err)
		}
		if len(mods) != 1 {
			return login{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(mods))
		}
	} else {
		file := jaasFileFromKafkaOpts(os.Getenv("KAFKA_OPTS"))
		if file == "" {
			return login{}, fmt.Errorf("Could not find a '%s' entry in the JAAS configuration. System property '%s' is not set (set sasl.jaas.config)",
				kafkaClientContext, brokersecurity.JavaLoginConfigProperty)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return login{}, fmt.Errorf("reading the JAAS file %s: %v", file, err)
		}
		sections, err := brokersecurity.ParseJaasFile(string(data))
		if err != nil {
			return login{}, fmt.Errorf("JAAS file %s: %v", file, err)
		}
		if mods = sections[kafkaClientContext]; len(mods) == 0 {
			return login{}, fmt.Errorf("Could not find a '%s' entry in the JAAS configuration. System property '%s' is %s",
				kafkaClientContext, brokersecurity.JavaLoginConfigProperty, file)
		}
	}
	m := mods[0]
	if m.LoginModule != brokersecurity.PlainLoginModule && m.LoginModule != brokersecurity.ScramLoginModule {
		return login{}, fmt.Errorf("sasl.jaas.config: login module %s is not supported by Klassik's tools (use %s or %s)",
			m.LoginModule, brokersecurity.PlainLoginModule, brokersecurity.ScramLoginModule)
	}
	if v := m.Options["tokenauth"]; strings.EqualFold(v, "true") {
		return login{}, fmt.Errorf("sasl.jaas.config: tokenauth=true (delegation tokens) is not supported by Klassik's tools")
	}
	user, ok1 := m.Options["username"]
	pass, ok2 := m.Options["password"]
	if !ok1 || !ok2 {
		return login{}, fmt.Errorf("sasl.jaas.config: %s needs username and password options", m.LoginModule)
	}
	return login{username: user, password: pass}, nil
}

// jaasFileFromKafkaOpts finds -Djava.security.auth.login.config=FILE in
// the JVM options the scripts pass.
func jaasFileFromKafkaOpts(opts string) string {
	flag := "-D" + brokersecurity.JavaLoginConfigProperty + "="
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, flag); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
