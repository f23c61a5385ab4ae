package main

import (
	"slices"

	"github.com/klassik/klassik/config"
)

// The dynamic broker key tables and validation live in the config package
// (dynamic broker configs); these bind kafka-configs to them.

// brokerConfigNames are DynamicConfig.Broker.names: every dynamic broker
// key, for the --add-config help.
func brokerConfigNames() []string {
	var out []string
	for _, k := range config.BrokerKeys() {
		if config.IsDynamicBrokerKey(k.Name) {
			out = append(out, k.Name)
		}
	}
	for _, k := range config.DynamicOnlyKeys() {
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// validateDynamicBrokerConfigs is DynamicBrokerConfig.validateConfigs.
func validateDynamicBrokerConfigs(props map[string]string, perBroker bool) error {
	return config.ValidateDynamicBrokerConfigs(props, perBroker)
}

// validateBrokerConfigTypes is DynamicConfig.Broker.validate: the values
// of known keys parse with their types; custom keys pass. (The names were
// checked when they were added.)
func validateBrokerConfigTypes(props map[string]string) error {
	if err := config.ValidateDynamicBrokerConfigs(props, true); err != nil {
		return configException("%s", err.Error())
	}
	return nil
}

// isPasswordConfig is DynamicBrokerConfig.isPasswordConfig.
func isPasswordConfig(name string) bool { return config.IsPasswordConfig(name) }

// newPasswordEncoder is createPasswordEncoder: an encoder of the
// password.encoder.* options given (secret, cipher algorithm, key length,
// iterations, key factory), Kafka's defaults for the others.
func newPasswordEncoder(props map[string]string) (func(string) (string, error), error) {
	// A configuration holding only the encoder options (zookeeper.connect
	// is required by every configuration and plays no part here).
	full := map[string]string{"zookeeper.connect": "localhost:2181"}
	for k, v := range props {
		full[k] = v
	}
	c, err := config.FromMap(full)
	if err != nil {
		return nil, configException("%s", err.Error())
	}
	enc := c.NewPasswordEncoder(false)
	return enc.Encode, nil
}
