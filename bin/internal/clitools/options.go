package clitools

import (
	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// KeyValues reads every value of the repeatable key=value option name
// (--property, --consumer-property, ...) with ParseKeyValues; a malformed
// pair is a usage error.
func KeyValues(p *admintool.Options, name string) (map[string]string, error) {
	kv, err := ParseKeyValues(p.Values(name))
	if err != nil {
		return nil, admintool.Usagef("%v", err)
	}
	return kv, nil
}

// ClientProperties reads a console tool's client properties: the file of
// configOpt (--consumer.config, --producer.config; empty when absent) and
// the pairs of propOpt (--consumer-property, --producer-property), which
// take precedence over the file. They are returned apart because a tool
// may check where a setting came from; Merge(file, extra) is the result.
func ClientProperties(p *admintool.Options, configOpt, propOpt string) (file, extra map[string]string, err error) {
	file = map[string]string{}
	if p.Has(configOpt) {
		if file, err = admintool.LoadProperties(p.Value(configOpt)); err != nil {
			return nil, nil, err
		}
	}
	if extra, err = KeyValues(p, propOpt); err != nil {
		return nil, nil, err
	}
	return file, extra, nil
}

// CheckConnection is the rule of the tools that talk to the brokers with
// --bootstrap-server or, in the classic mode, to ZooKeeper with
// --zookeeper: exactly one of the two is given.
func CheckConnection(bootstrap, zookeeper string) error {
	switch {
	case bootstrap == "" && zookeeper == "":
		return admintool.Usagef(`Missing required argument "[bootstrap-server]"`)
	case bootstrap != "" && zookeeper != "":
		return admintool.Usagef("Option [bootstrap-server] cannot be used with option [zookeeper]")
	}
	return nil
}
