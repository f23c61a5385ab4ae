package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// zkUpdatableWhileRunning are the broker keys the ZooKeeper mode may set
// while brokers run (Kafka's
// BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning): the
// replication throttles. Every other dynamic broker config is validated by
// the brokers, so it needs --bootstrap-server once they run.
var zkUpdatableWhileRunning = []string{
	"leader.replication.throttled.rate",
	"follower.replication.throttled.rate",
	"replica.alter.log.dirs.io.max.bytes.per.second",
}

const passwordEncoderPrefix = "password.encoder."

// scalaSet is an immutable Scala Set's toString.
func scalaSet(keys []string) string { return "Set(" + strings.Join(keys, ", ") + ")" }

// preProcessBrokerConfigs is alterConfigWithZk's broker branch with
// preProcessBrokerConfigs: outside the throttles, a per-broker config may
// be written only while that broker is down, the cluster default only
// while no broker runs; the password.encoder.* options encode the password
// configs and are removed, never stored.
func preProcessBrokerConfigs(zc *zkclient.Client, name string, add map[string]string) error {
	var dynamic []string
	for _, k := range propertiesKeys(add) {
		if !slices.Contains(zkUpdatableWhileRunning, k) {
			dynamic = append(dynamic, k)
		}
	}
	if len(dynamic) == 0 {
		return nil
	}
	perBroker := name != zkpaths.ConfigEntityDefault
	msg := fmt.Sprintf("--bootstrap-server option must be specified to update broker configs %s.", scalaSet(dynamic))
	const info = "Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers" +
		" are started to enable encrypted password configs to be stored in ZooKeeper."
	if perBroker {
		id, err := strconv.ParseInt(name, 10, 32)
		if err != nil {
			return argErrorf("Error parsing broker %s. The broker's Entity Name must be a single integer value", name)
		}
		_, running, err := zc.GetBroker(int32(id))
		if err != nil {
			return err
		}
		if running {
			return argErrorf("requirement failed: %s when broker %s is running. %s", msg, name, info)
		}
	} else {
		ids, err := zc.GetBrokerIDs()
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			return argErrorf("requirement failed: %s for default cluster if any broker is running. %s", msg, info)
		}
	}
	encoderProps := map[string]string{}
	for k, v := range add {
		if strings.HasPrefix(k, passwordEncoderPrefix) {
			encoderProps[k] = v
			delete(add, k)
		}
	}
	if err := validateDynamicBrokerConfigs(add, perBroker); err != nil {
		return configException("%s", err.Error())
	}
	var passwords []string
	for _, k := range propertiesKeys(add) {
		if isPasswordConfig(k) {
			passwords = append(passwords, k)
		}
	}
	if len(passwords) == 0 {
		return nil
	}
	if _, ok := encoderProps["password.encoder.secret"]; !ok {
		return argErrorf("requirement failed: password.encoder.secret must be specified to update %s."+
			" Other password encoder configs like cipher algorithm and iterations may also be specified"+
			" to override the default encoding parameters. Password encoder configs will not be persisted"+
			" in ZooKeeper.", scalaSet(passwords))
	}
	encode, err := newPasswordEncoder(encoderProps)
	if err != nil {
		return err
	}
	for _, k := range passwords {
		enc, err := encode(add[k])
		if err != nil {
			return err
		}
		add[k] = enc
	}
	return nil
}
