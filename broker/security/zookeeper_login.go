package security

import (
	"fmt"
	"os"
	"strings"
)

// ZooKeeperClientContext is the JAAS section of a ZooKeeper client login
// (ZooKeeper's default for zookeeper.sasl.clientconfig).
const ZooKeeperClientContext = "Client"

// System properties (-Dname=value in KAFKA_OPTS) that steer the ZooKeeper
// client login, as Kafka's JaasUtils reads them (with
// JavaLoginConfigProperty naming the JAAS file).
const (
	ZkSaslClientProperty   = "zookeeper.sasl.client"       // "false" turns the login off
	ZkLoginContextProperty = "zookeeper.sasl.clientconfig" // section name, default Client
)

// ZooKeeperLogin is the user and password of the JAAS Client section, used
// with ZooKeeper's digest scheme (zkclient/auth.go) because Klassik's
// ZooKeeper client has no SASL.
type ZooKeeperLogin struct {
	User, Password string
}

// SystemProperties extracts the -Dname=value options of a KAFKA_OPTS value
// (split on white space, as Kafka's scripts pass it to java); other JVM
// flags are ignored.
func SystemProperties(kafkaOpts string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(kafkaOpts) {
		if rest, ok := strings.CutPrefix(f, "-D"); ok && rest != "" {
			k, v, _ := strings.Cut(rest, "=")
			out[k] = v
		}
	}
	return out
}

// DigestLoginModule is ZooKeeper's JAAS login module for a user and
// password (SASL DIGEST-MD5 in Kafka; ZooKeeper's digest scheme here).
const DigestLoginModule = "org.apache.zookeeper.server.auth.DigestLoginModule"

// ZooKeeperLoginFromSystemProperties finds the ZooKeeper client login as
// Kafka's JaasUtils.isZkSaslEnabled does: the section named by
// zookeeper.sasl.clientconfig (default Client) of the JAAS file of
// java.security.auth.login.config. No file or no such section: nil. The
// section must hold one DigestLoginModule with username and password; any
// other module (Krb5LoginModule, ...) is an error, as is the section with
// zookeeper.sasl.client=false. jaasFile is the file named, for messages.
func ZooKeeperLoginFromSystemProperties(sys map[string]string) (login *ZooKeeperLogin, jaasFile string, err error) {
	jaasFile = sys[JavaLoginConfigProperty]
	if jaasFile == "" {
		return nil, "", nil
	}
	context := ZooKeeperClientContext
	if v, ok := sys[ZkLoginContextProperty]; ok {
		context = v
	}
	data, err := os.ReadFile(jaasFile)
	if err != nil {
		return nil, jaasFile, fmt.Errorf("Exception while loading Zookeeper JAAS login context %s: %w", zkSecuritySysConfigString(sys), err)
	}
	sections, err := ParseJaasFile(string(data))
	if err != nil {
		return nil, jaasFile, fmt.Errorf("Exception while loading Zookeeper JAAS login context %s: %w", zkSecuritySysConfigString(sys), err)
	}
	mods, ok := sections[context]
	if !ok {
		return nil, jaasFile, nil
	}
	if v, set := sys[ZkSaslClientProperty]; set && !strings.EqualFold(v, "true") {
		return nil, jaasFile, fmt.Errorf("Exception while determining if ZooKeeper is secure %s: the JAAS %s section is present but %s=%s disables the ZooKeeper client login",
			zkSecuritySysConfigString(sys), context, ZkSaslClientProperty, v)
	}
	if len(mods) != 1 || mods[0].LoginModule != DigestLoginModule {
		names := make([]string, len(mods))
		for i, m := range mods {
			names[i] = m.LoginModule
		}
		return nil, jaasFile, fmt.Errorf("JAAS file %s, section %s: login module %s is not supported; Klassik logs in to ZooKeeper with "+
			"one %s (username, password), sent with ZooKeeper's digest scheme", jaasFile, context, strings.Join(names, ", "), DigestLoginModule)
	}
	user, okU := mods[0].Options["username"]
	pass, okP := mods[0].Options["password"]
	if !okU || !okP || user == "" {
		return nil, jaasFile, fmt.Errorf("JAAS file %s, section %s: %s needs username and password", jaasFile, context, DigestLoginModule)
	}
	return &ZooKeeperLogin{User: user, Password: pass}, jaasFile, nil
}

// zkSecuritySysConfigString is JaasUtils.zkSecuritySysConfigString.
func zkSecuritySysConfigString(sys map[string]string) string {
	get := func(k, def string) string {
		if v, ok := sys[k]; ok {
			return v
		}
		return "default:" + def
	}
	return "[" + JavaLoginConfigProperty + "=" + sys[JavaLoginConfigProperty] + ", " + ZkSaslClientProperty + "=" + get(ZkSaslClientProperty, "true") +
		", " + ZkLoginContextProperty + "=" + get(ZkLoginContextProperty, ZooKeeperClientContext) + "]"
}

// zkClientSystemProperties maps the zookeeper.* security keys to the
// ZooKeeper client's own system properties (Kafka's
// ZkSslConfigToSystemPropertyMap; note the camel case), which Kafka's
// tools honour through ZKClientConfig when given in KAFKA_OPTS.
var zkClientSystemProperties = map[string]string{
	"zookeeper.ssl.client.enable":                     "zookeeper.client.secure",
	"zookeeper.clientCnxnSocket":                      "zookeeper.clientCnxnSocket",
	"zookeeper.ssl.keystore.location":                 "zookeeper.ssl.keyStore.location",
	"zookeeper.ssl.keystore.password":                 "zookeeper.ssl.keyStore.password",
	"zookeeper.ssl.keystore.type":                     "zookeeper.ssl.keyStore.type",
	"zookeeper.ssl.truststore.location":               "zookeeper.ssl.trustStore.location",
	"zookeeper.ssl.truststore.password":               "zookeeper.ssl.trustStore.password",
	"zookeeper.ssl.truststore.type":                   "zookeeper.ssl.trustStore.type",
	"zookeeper.ssl.protocol":                          "zookeeper.ssl.protocol",
	"zookeeper.ssl.enabled.protocols":                 "zookeeper.ssl.enabledProtocols",
	"zookeeper.ssl.cipher.suites":                     "zookeeper.ssl.ciphersuites",
	"zookeeper.ssl.endpoint.identification.algorithm": "zookeeper.ssl.hostnameVerification",
	"zookeeper.ssl.crl.enable":                        "zookeeper.ssl.crl",
	"zookeeper.ssl.ocsp.enable":                       "zookeeper.ssl.ocsp",
}

// ZooKeeperTLSFromSystemProperties returns, under Kafka's key names, the
// ZooKeeper client TLS settings given as ZooKeeper system properties
// (hostnameVerification true/false becomes HTTPS/empty, as Kafka
// translates it).
func ZooKeeperTLSFromSystemProperties(sys map[string]string) map[string]string {
	out := map[string]string{}
	for key, prop := range zkClientSystemProperties {
		v, ok := sys[prop]
		if !ok {
			continue
		}
		if key == "zookeeper.ssl.endpoint.identification.algorithm" {
			if strings.EqualFold(v, "true") {
				v = "HTTPS"
			} else {
				v = ""
			}
		}
		out[key] = v
	}
	return out
}
