package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/bin/internal/clitools"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// runZooKeeper is ConfigCommand.processCommandWithZk: the tool writes
// /config/<type>/<name> and the change notification itself
// (AdminZkClient.changeConfigs) or reads the nodes.
func runZooKeeper(o *options, out io.Writer) error {
	// Kafka's tool uses a 30 s session and connection timeout.
	// Its session is secured as Kafka's is: the JAAS Client login from
	// KAFKA_OPTS, TLS from --zk-tls-config-file (clitools.ZooKeeperOptions).
	sec, err := clitools.ZooKeeperOptions(o.zkTLSConfig)
	if err != nil {
		return err
	}
	zc, err := zkclient.Connect(o.zookeeper, 30*time.Second, append(sec, zkclient.WithConnectTimeout(30*time.Second))...)
	if err != nil {
		return err
	}
	defer zc.Close()
	if o.alter {
		return alterWithZk(zc, o, out)
	}
	return describeWithZk(zc, o, out)
}

// entityString is ConfigCommand's Entity.toString: "topic 'orders'",
// "user-principal 'alice'" (users desanitized), "default user-principal".
func entityString(entityType, sanitized string) string {
	typeName := entityType
	switch entityType {
	case typeUsers:
		typeName = "user-principal"
	case typeClients:
		typeName = "client-id"
	case typeTopics:
		typeName = "topic"
	}
	if sanitized == zkpaths.ConfigEntityDefault {
		return "default " + typeName
	}
	name := sanitized
	if entityType == typeUsers || entityType == typeClients {
		if d, err := zkpaths.Desanitize(sanitized); err == nil {
			name = d
		}
	}
	return typeName + " '" + name + "'"
}

func alterWithZk(zc *zkclient.Client, o *options, out io.Writer) error {
	add, err := configsToBeAdded(o.p)
	if err != nil {
		return err
	}
	del := configsToBeDeleted(o.p)
	typ, name := o.types[0], o.names[0]
	sanitized := name
	if typ == typeUsers {
		sanitized = zkpaths.Sanitize(name)
		if err := refuseQuotas(add, del); err != nil {
			return err
		}
		// preProcessScramCredentials: the password never reaches ZooKeeper.
		for _, m := range scramMechanisms {
			v, ok := add[m.name]
			if !ok {
				continue
			}
			iterations, password, err := parseCredentialValue(zkCredentialRE, m.enum, v, false)
			if err != nil {
				return err
			}
			f, _ := security.NewScramFormatter(m.name)
			cred, err := f.GenerateCredential(password, iterations)
			if err != nil {
				return err
			}
			add[m.name] = cred.String()
		}
	}
	configs, err := zc.GetEntityConfigs(typ, sanitized)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range del {
		if _, ok := configs[k]; !ok {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	maps.Copy(configs, add)
	for _, k := range del {
		delete(configs, k)
	}
	switch typ {
	case typeUsers:
		// DynamicConfig.User.validate: quota keys and SCRAM mechanisms only.
		var unknown []string
		for k := range configs {
			if !security.IsScramMechanism(k) && !isQuotaKey(k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return argErrorf("requirement failed: Unknown Dynamic Configuration: HashSet(%s).", strings.Join(unknown, ", "))
		}
	case typeTopics:
		exists, err := zc.TopicExists(name)
		if err != nil {
			return err
		}
		if !exists {
			return &commandError{fmt.Sprintf("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: Topic '%s' does not exist.", name)}
		}
		if err := config.ValidateTopicConfig(configs); err != nil {
			msg := err.Error()
			if strings.HasPrefix(msg, "Unknown topic config name") {
				return argErrorf("%s", msg)
			}
			return &commandError{"org.apache.kafka.common.config.ConfigException: " + msg}
		}
	}
	if err := zc.ChangeEntityConfigs(typ, sanitized, configs); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", entityString(typ, sanitized))
	return nil
}

func describeWithZk(zc *zkclient.Client, o *options, out io.Writer) error {
	typ := o.types[0]
	var entities []string // sanitized
	all := len(o.names) == 0
	if all {
		kids, err := zc.Children(zkpaths.ConfigTypePath(typ))
		if err != nil && !isNoNode(err) {
			return err
		}
		entities = slices.Sorted(slices.Values(kids))
	} else {
		name := o.names[0]
		if typ == typeUsers {
			name = zkpaths.Sanitize(name)
		}
		entities = []string{name}
	}
	for _, e := range entities {
		configs, err := zc.GetEntityConfigs(typ, e)
		if err != nil {
			return err
		}
		// All users: skip nodes that only hold <user, client> quotas.
		if len(configs) == 0 && all && typ == typeUsers {
			continue
		}
		var kv []string
		for _, k := range zkpaths.PropertiesOrder(slices.Collect(maps.Keys(configs))) {
			kv = append(kv, k+"="+configs[k])
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", entityString(typ, e), strings.Join(kv, ","))
	}
	return nil
}

func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
