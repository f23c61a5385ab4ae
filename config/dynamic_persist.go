package config

// The stored form of dynamic broker configs (/config/brokers/<entity>):
// password configs encoded with the password encoder; what a broker drops
// when it loads a stored set (DynamicBrokerConfig.fromPersistentProps and
// toPersistentProps).

import (
	"errors"
	"maps"
	"slices"
)

// ErrPasswordAtDefault is Kafka's refusal of a password config at the
// cluster default.
var ErrPasswordAtDefault = errors.New("Password config can be defined only at broker level")

// ToPersistentProps returns props as they are stored: password configs
// encoded with c's password encoder. A password config at the cluster
// default, or on a broker without password.encoder.secret, is refused with
// Kafka's message.
func ToPersistentProps(props map[string]string, perBroker bool, c *Config) (map[string]string, error) {
	out := maps.Clone(props)
	if out == nil {
		out = map[string]string{}
	}
	enc := c.NewPasswordEncoder(false)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !IsPasswordConfig(k) {
			continue
		}
		if !perBroker {
			return nil, ErrPasswordAtDefault
		}
		if enc == nil {
			return nil, ErrNoPasswordEncoderSecret
		}
		v, err := enc.Encode(props[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// FromPersistentProps returns the entries of a stored set a broker applies:
// non-dynamic keys, security keys without a listener prefix, per-broker keys
// in the cluster default, values of the wrong type and password configs
// that c's encoder cannot decode are dropped, each reported through logErr
// (message, then key/value attributes) as Kafka logs them. Password configs
// come back decoded.
func FromPersistentProps(stored map[string]string, perBroker bool, c *Config, logErr func(msg string, args ...any)) map[string]string {
	props := maps.Clone(stored)
	if props == nil {
		props = map[string]string{}
	}
	drop := func(keys []string, msg string) {
		if len(keys) == 0 {
			return
		}
		for _, k := range keys {
			delete(props, k)
		}
		logErr(msg, "keys", scalaSet(keys))
	}
	var badType []string
	var badErr error
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if IsPasswordConfig(k) {
			continue // checked after decoding
		}
		if err := checkDynamicType(typeBaseName(k), props[k]); err != nil {
			badType = append(badType, k)
			badErr = errors.Join(badErr, err)
		}
	}
	if len(badType) > 0 {
		src := "broker"
		if !perBroker {
			src = "default cluster"
		}
		drop(badType, "Dynamic "+src+" config contains invalid values, these configs will be ignored")
		logErr("invalid dynamic config values", "err", badErr)
	}
	var nonDynamic, unprefixed, brokerOnly []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		switch {
		case isKafkaBrokerKey(k) && !IsDynamicBrokerKey(k) && lookupDynamicOnlyKey(k) == nil:
			nonDynamic = append(nonDynamic, k)
		case securityKeySet[k]:
			unprefixed = append(unprefixed, k)
		case !perBroker && isPerBrokerKey(k):
			brokerOnly = append(brokerOnly, k)
		}
	}
	drop(nonDynamic, "Non-dynamic configs configured in ZooKeeper will be ignored")
	drop(unprefixed, "Security configs can be dynamically updated only using listener prefix, base configs will be ignored")
	drop(brokerOnly, "Per-broker configs defined at default cluster level will be ignored")
	enc := c.NewPasswordEncoder(false)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !IsPasswordConfig(k) {
			continue
		}
		var plain string
		err := ErrNoPasswordEncoderSecret
		if enc != nil {
			plain, err = enc.Decode(props[k])
		}
		if err != nil {
			logErr("Dynamic password config could not be decoded, ignoring.", "key", k, "err", err)
			delete(props, k)
			continue
		}
		props[k] = plain
	}
	return props
}

// isPerBrokerKey: Kafka's perBrokerConfigs (security and listener keys;
// listener-prefixed keys other than the cluster-level connection limits).
func isPerBrokerKey(k string) bool {
	if base, ok := listenerBaseName(k); ok {
		return !slices.Contains(clusterLevelListenerKeys, base)
	}
	return DynamicUpdateMode(k) == UpdateModePerBroker
}
