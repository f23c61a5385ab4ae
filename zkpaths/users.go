package zkpaths

import (
	"fmt"
	"maps"
	"strings"
)

// User entities: /config/users/<sanitized user> holds a user's SCRAM
// credentials (keys SCRAM-SHA-256 and SCRAM-SHA-512, values in
// ScramCredentialUtils' "salt=…,stored_key=…,server_key=…,iterations=N"
// form) and its quotas (producer_byte_rate, …) in one config object:
//
//	{"version":1,"config":{"SCRAM-SHA-256":"salt=…,iterations=8192","producer_byte_rate":"1048576"}}
//
// /config/users/<user>/clients/<client> holds <user, client> quotas, and
// /config/users/<default> the default user quotas; neither carries
// credentials. A change is announced by a config change notification with
// entity_path "users/<sanitized user>" (or ".../clients/<client>").

// ScramConfigKeys are the keys of a user config that hold SCRAM
// credentials, in Kafka's ScramMechanism order.
var ScramConfigKeys = []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}

// isScramKey reports whether key names a SCRAM credential.
func isScramKey(key string) bool { return key == ScramConfigKeys[0] || key == ScramConfigKeys[1] }

// UserConfigPath is the config node of user (sanitized here, as Kafka's
// Sanitizer does): /config/users/alice, /config/users/User%3Aalice.
func UserConfigPath(user string) string { return ConfigPath(ConfigTypeUser, Sanitize(user)) }

// UserEntityPath is the entity_path of a change notification for user:
// "users/<sanitized user>".
func UserEntityPath(user string) string { return ConfigEntityPath(ConfigTypeUser, Sanitize(user)) }

// UserConfig is a decoded /config/users/<user> node: the SCRAM credential
// strings by mechanism, and every other key (quotas) kept as it was so a
// credential change never touches them.
type UserConfig struct {
	Scram map[string]string // mechanism -> stored credential string
	Other map[string]string
}

// Config is the whole key set, as the node stores it.
func (u UserConfig) Config() map[string]string {
	out := maps.Clone(u.Other)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, u.Scram)
	return out
}

// Encode writes the node: {"version":1,"config":{...}}.
func (u UserConfig) Encode() []byte { return EncodeEntityConfig(u.Config()) }

// SplitUserConfig separates a user's config keys into credentials and the
// rest.
func SplitUserConfig(config map[string]string) UserConfig {
	u := UserConfig{Scram: map[string]string{}, Other: map[string]string{}}
	for k, v := range config {
		if isScramKey(k) {
			u.Scram[k] = v
		} else {
			u.Other[k] = v
		}
	}
	return u
}

// DecodeUserConfig reads /config/users/<user> as Kafka's
// ConfigEntityZNode.decode does (null or empty data and a missing config
// object mean no keys).
func DecodeUserConfig(data []byte) (UserConfig, error) {
	c, err := DecodeEntityConfig(data)
	if err != nil {
		return UserConfig{}, err
	}
	return SplitUserConfig(c), nil
}

// UserCredentialEntity reads the entity name of a "users" change
// notification (ConfigChange.EntityName, sanitized): ok is true with the
// desanitized user for "<user>"; false for "<user>/clients/<client>" and
// "<default>", which carry quotas only (Kafka's UserConfigHandler updates
// credentials for neither). Any other shape is an error, as in Kafka.
func UserCredentialEntity(name string) (user string, ok bool, err error) {
	parts := strings.Split(name, "/")
	switch {
	case len(parts) == 3 && parts[1] == ConfigTypeClient && parts[0] != "" && parts[2] != "":
		return "", false, nil
	case len(parts) != 1 || parts[0] == "":
		return "", false, fmt.Errorf("zkpaths: invalid user entity path %q", name)
	case parts[0] == ConfigEntityDefault:
		return "", false, nil
	}
	user, err = Desanitize(parts[0])
	if err != nil {
		return "", false, err
	}
	return user, true, nil
}

// PropertiesOrder is the order in which Kafka iterates a config entity's
// keys once read back into a java.util.Properties: the order the node's
// JSON lists them in, and the order kafka-configs --zookeeper prints them.
func PropertiesOrder(keys []string) []string { return javaPropertiesOrder(keys) }
