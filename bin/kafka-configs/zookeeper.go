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

// zkEntity is ConfigCommand's Entity: a type and a sanitized name (nil:
// every entity of the type).
type zkEntity struct {
	typ  string
	name *string
}

func (e zkEntity) path() string {
	if e.name == nil {
		return e.typ
	}
	return e.typ + "/" + *e.name
}

// String is Entity.toString: "topic 'orders'", "user-principal 'alice'"
// (users and clients desanitized), "default client-id", "brokers '1'".
func (e zkEntity) String() string {
	typeName := e.typ
	switch e.typ {
	case typeUsers:
		typeName = "user-principal"
	case typeClients:
		typeName = "client-id"
	case typeTopics:
		typeName = "topic"
	}
	switch {
	case e.name == nil:
		return e.typ
	case *e.name == zkpaths.ConfigEntityDefault:
		return "default " + typeName
	}
	name := *e.name
	if e.typ == typeUsers || e.typ == typeClients {
		if d, err := zkpaths.Desanitize(name); err == nil {
			name = d
		}
	}
	return typeName + " '" + name + "'"
}

// configEntity is ConfigCommand's ConfigEntity: a root entity and, for
// <user, client> quotas, a child.
type configEntity struct {
	root  zkEntity
	child *zkEntity
}

// fullSanitizedName is the path below /config/<root type>.
func (c configEntity) fullSanitizedName() string {
	n := ""
	if c.root.name != nil {
		n = *c.root.name
	}
	if c.child != nil {
		n += "/" + c.child.path()
	}
	return n
}

func (c configEntity) String() string {
	if c.child != nil {
		return c.root.String() + ", " + c.child.String()
	}
	return c.root.String()
}

func strp(s string) *string { return &s }

// parseEntity is ConfigCommand.parseEntity.
func parseEntity(o *options) (configEntity, error) {
	types, names := o.types, o.names
	if types[0] != typeUsers && types[0] != typeClients {
		var name *string
		if len(names) > 0 {
			name = strp(names[0])
			if names[0] == "" {
				name = strp(zkpaths.ConfigEntityDefault)
			}
		}
		return configEntity{root: zkEntity{typ: types[0], name: name}}, nil
	}
	if o.alter && len(names) != len(types) {
		return configEntity{}, argErrorf("--entity-name or --entity-default must be specified with each --entity-type for --alter")
	}
	// <user, client> with the client named first: swap.
	if len(types) == 2 && types[0] == typeClients {
		types = []string{types[1], types[0]}
		if len(names) == 2 {
			names = []string{names[1], names[0]}
		}
	}
	var ents []zkEntity
	for i, t := range types {
		e := zkEntity{typ: t}
		if i < len(names) {
			if names[i] == "" {
				e.name = strp(zkpaths.ConfigEntityDefault)
			} else {
				e.name = strp(zkpaths.Sanitize(names[i]))
			}
		}
		ents = append(ents, e)
	}
	c := configEntity{root: ents[0]}
	if len(ents) > 1 {
		c.child = &ents[1]
	}
	return c, nil
}

// allEntities is ConfigEntity.getAllEntities: the entity itself, or every
// entity with a config node where names are missing.
func (c configEntity) allEntities(zc *zkclient.Client) ([]configEntity, error) {
	children := func(path string) ([]string, error) {
		kids, err := zc.Children(zkpaths.ConfigTypePath(path))
		if err != nil && !isNoNode(err) {
			return nil, err
		}
		return slices.Sorted(slices.Values(kids)), nil
	}
	switch {
	case c.root.name == nil:
		names, err := children(c.root.typ)
		if err != nil {
			return nil, err
		}
		var out []configEntity
		for _, n := range names {
			r := configEntity{root: zkEntity{typ: c.root.typ, name: strp(n)}}
			if c.child == nil {
				out = append(out, r)
				continue
			}
			r.child = &zkEntity{typ: c.child.typ}
			sub, err := r.allEntities(zc)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
		return out, nil
	case c.child != nil && c.child.name == nil:
		names, err := children(c.root.path() + "/" + c.child.typ)
		if err != nil {
			return nil, err
		}
		var out []configEntity
		for _, n := range names {
			out = append(out, configEntity{root: c.root, child: &zkEntity{typ: c.child.typ, name: strp(n)}})
		}
		return out, nil
	}
	return []configEntity{c}, nil
}

func alterWithZk(zc *zkclient.Client, o *options, out io.Writer) error {
	add, err := configsToBeAdded(o.p, out)
	if err != nil {
		return err
	}
	del := configsToBeDeleted(o.p)
	entity, err := parseEntity(o)
	if err != nil {
		return err
	}
	typ, name := entity.root.typ, entity.fullSanitizedName()
	switch typ {
	case typeUsers:
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
	case typeBrokers:
		if err := preProcessBrokerConfigs(zc, name, add); err != nil {
			return err
		}
	}
	configs, err := zc.GetEntityConfigs(typ, name)
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
	// AdminZkClient.changeConfigs' validation of the complete set.
	switch typ {
	case typeUsers:
		userOnly := name != zkpaths.ConfigEntityDefault && !strings.Contains(name, "/clients")
		if err := validateQuotaConfigs(configs, userOnly, false); err != nil {
			return err
		}
	case typeClients:
		if err := validateQuotaConfigs(configs, false, false); err != nil {
			return err
		}
	case typeIPs:
		if name != zkpaths.ConfigEntityDefault && !validIPEntity(name) {
			return &commandError{fmt.Sprintf("kafka.admin.AdminOperationException: %s is not a valid IP or resolvable host.", name)}
		}
		if err := validateQuotaConfigs(configs, false, true); err != nil {
			return err
		}
	case typeBrokers:
		if err := validateBrokerConfigTypes(configs); err != nil {
			return err
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
	if err := zc.ChangeEntityConfigs(typ, name, configs); err != nil {
		return err
	}
	fmt.Fprintf(out, "Completed updating config for entity: %s.\n", entity)
	return nil
}

func describeWithZk(zc *zkclient.Client, o *options, out io.Writer) error {
	entity, err := parseEntity(o)
	if err != nil {
		return err
	}
	// All users: skip nodes that only hold <user, client> quotas.
	allUsers := entity.root.typ == typeUsers && entity.root.name == nil && entity.child == nil
	entities, err := entity.allEntities(zc)
	if err != nil {
		return err
	}
	for _, e := range entities {
		configs, err := zc.GetEntityConfigs(e.root.typ, e.fullSanitizedName())
		if err != nil {
			return err
		}
		if len(configs) == 0 && allUsers {
			continue
		}
		var kv []string
		for _, k := range propertiesKeys(configs) {
			kv = append(kv, k+"="+configs[k])
		}
		fmt.Fprintf(out, "Configs for %s are %s\n", e, strings.Join(kv, ","))
	}
	return nil
}

func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
