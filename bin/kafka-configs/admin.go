package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
)

// adminTool runs the commands through the brokers (--bootstrap-server), as
// ConfigCommand.processCommand with the Java admin client.
type adminTool struct {
	cl      *kgo.Client
	timeout time.Duration
	out     io.Writer
}

func runAdmin(o *options, out io.Writer) error {
	// Kafka's admin client: default.api.timeout.ms 60 s.
	cl, timeout, err := admintool.NewClient(o.bootstrap, "kafka-configs", 60*time.Second, o.props)
	if err != nil {
		return err
	}
	defer cl.Close()
	a := &adminTool{cl: cl, timeout: timeout, out: out}
	if o.alter {
		if len(o.types) != len(o.names) {
			return argErrorf("An entity name must be specified for every entity type")
		}
		return a.alter(o)
	}
	return a.describe(o)
}

func (a *adminTool) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), a.timeout)
}

func (a *adminTool) alter(o *options) error {
	add, err := configsToBeAdded(o.p, a.out)
	if err != nil {
		return err
	}
	del := configsToBeDeleted(o.p)
	typ, name := o.types[0], o.names[0]
	switch typ {
	case typeTopics:
		err = a.alterTopic(name, add, del)
	case typeBrokers:
		err = a.alterBroker(name, add, del)
	case typeBrokerLoggers:
		err = a.alterBrokerLoggers(name, add, del)
	case typeUsers, typeClients:
		err = a.alterUsersClients(o.types, o.names, add, del)
	case typeIPs:
		err = a.alterIPs(o.types, o.names, add, del)
	default:
		return argErrorf("Unsupported entity type: %s", typ)
	}
	if err != nil {
		return err
	}
	if name != "" {
		fmt.Fprintf(a.out, "Completed updating config for %s %s.\n", strings.TrimSuffix(typ, "s"), name)
	} else {
		fmt.Fprintf(a.out, "Completed updating default config for %s in the cluster.\n", typ)
	}
	return nil
}

// alterTopic checks the deletions against the topic's dynamic configs,
// then sends IncrementalAlterConfigs with SET and DELETE operations.
func (a *adminTool) alterTopic(topic string, add map[string]string, del []string) error {
	entries, err := a.resourceConfig(typeTopics, topic, false, false)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range del {
		if !slices.ContainsFunc(entries, func(e kmsg.DescribeConfigsResponseResourceConfig) bool { return e.Name == k }) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for _, k := range propertiesKeys(add) {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := add[k]
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, &v
		r.Configs = append(r.Configs, c)
	}
	for _, k := range del {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = k, kmsg.IncrementalAlterConfigOpDelete
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "INCREMENTAL_ALTER_CONFIGS"))
	}
	for _, res := range resp.Resources {
		if ke := admintool.NewKafkaError(res.ErrorCode, res.ErrorMessage); ke != nil {
			return executionError(ke)
		}
	}
	return nil
}

// alterUserScram is alterUserScramCredentialConfigs: the salted passwords
// are computed here, with a salt of Kafka's shape, and sent with
// AlterUserScramCredentials (to the controller).
func (a *adminTool) alterUserScram(user string, add map[string]string, del []string) error {
	var unknownAdd, unknownDel []string
	for _, k := range propertiesKeys(add) {
		if !security.IsScramMechanism(k) && !isQuotaKey(k) {
			unknownAdd = append(unknownAdd, k)
		}
	}
	for _, k := range del {
		if !security.IsScramMechanism(k) && !isQuotaKey(k) {
			unknownDel = append(unknownDel, k)
		}
	}
	if len(unknownAdd) > 0 {
		return argErrorf("Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set(%s)", strings.Join(unknownAdd, ", "))
	}
	if len(unknownDel) > 0 {
		return argErrorf("Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: ArrayBuffer(%s)", strings.Join(unknownDel, ", "))
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	for _, k := range del {
		d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
		d.Name, d.Mechanism = user, int8(security.ScramMechanismTypeOf(k))
		req.Deletions = append(req.Deletions, d)
	}
	for _, m := range scramMechanisms {
		v, ok := add[m.name]
		if !ok {
			continue
		}
		iterations, password, err := parseCredentialValue(adminCredentialRE, m.name, v, true)
		if err != nil {
			return err
		}
		f, _ := security.NewScramFormatter(m.name)
		salt, err := security.RandomScramSalt()
		if err != nil {
			return err
		}
		sp, err := f.SaltedPassword(password, salt, iterations)
		if err != nil {
			return err
		}
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, int8(security.ScramMechanismTypeOf(m.name)), int32(iterations), salt, sp
		req.Upsertions = append(req.Upsertions, u)
	}
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "ALTER_USER_SCRAM_CREDENTIALS"))
	}
	for _, r := range resp.Results {
		if ke := admintool.NewKafkaError(r.ErrorCode, r.ErrorMessage); ke != nil {
			return executionError(ke)
		}
	}
	return nil
}

func (a *adminTool) describe(o *options) error {
	switch o.types[0] {
	case typeTopics, typeBrokers, typeBrokerLoggers:
		return a.describeResources(o)
	case typeUsers, typeClients:
		return a.describeUsersClients(o.types, o.names)
	case typeIPs:
		return a.describeQuotaConfigs(o.types, o.names)
	}
	return argErrorf("Invalid entity type: %s", o.types[0])
}

// describeUserScram prints the SCRAM half of
// describeClientQuotaAndUserScramCredentialConfigs.
func (a *adminTool) describeUserScram(users []string) error {
	req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, u := range users {
		ru := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		ru.Name = u
		req.Users = append(req.Users, ru)
	}
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "DESCRIBE_USER_SCRAM_CREDENTIALS"))
	}
	if ke := admintool.NewKafkaError(resp.ErrorCode, resp.ErrorMessage); ke != nil {
		return executionError(ke)
	}
	for _, r := range resp.Results {
		if ke := admintool.NewKafkaError(r.ErrorCode, r.ErrorMessage); ke != nil {
			fmt.Fprintf(a.out, "Error retrieving SCRAM credential configs for user-principal '%s': %s: %s\n", r.User, ke.Class, ke.Message)
			continue
		}
		var parts []string
		for _, ci := range r.CredentialInfos {
			parts = append(parts, fmt.Sprintf("%s=iterations=%d", security.ScramMechanismName(security.ScramMechanismType(ci.Mechanism)), ci.Iterations))
		}
		fmt.Fprintf(a.out, "SCRAM credential configs for user-principal '%s' are %s\n", r.User, strings.Join(parts, ", "))
	}
	return nil
}

// configSourceNames are ConfigEntry.ConfigSource's constant names.
var configSourceNames = map[kmsg.ConfigSource]string{
	kmsg.ConfigSourceDynamicTopicConfig:         "DYNAMIC_TOPIC_CONFIG",
	kmsg.ConfigSourceDynamicBrokerConfig:        "DYNAMIC_BROKER_CONFIG",
	kmsg.ConfigSourceDynamicDefaultBrokerConfig: "DYNAMIC_DEFAULT_BROKER_CONFIG",
	kmsg.ConfigSourceStaticBrokerConfig:         "STATIC_BROKER_CONFIG",
	kmsg.ConfigSourceDefaultConfig:              "DEFAULT_CONFIG",
	kmsg.ConfigSourceDynamicBrokerLoggerConfig:  "DYNAMIC_BROKER_LOGGER_CONFIG",
}

func sourceName(s kmsg.ConfigSource) string {
	if n, ok := configSourceNames[s]; ok {
		return n
	}
	return "UNKNOWN"
}

func nullable(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// describeResources is describeResourceConfig: the named entity, or every
// topic (internal ones included), or every broker and then the cluster
// default.
func (a *adminTool) describeResources(o *options) error {
	typ := o.types[0]
	entities := o.names
	if len(entities) == 0 {
		ctx, cancel := a.ctx()
		defer cancel()
		req := kmsg.NewPtrMetadataRequest()
		resp, err := req.RequestWith(ctx, a.cl)
		if err != nil {
			return executionError(admintool.ClientError(err, "METADATA"))
		}
		if typ == typeTopics {
			for _, t := range resp.Topics {
				if t.Topic != nil && t.ErrorCode == 0 {
					entities = append(entities, *t.Topic)
				}
			}
			slices.Sort(entities)
		} else {
			for _, b := range resp.Brokers {
				entities = append(entities, strconv.Itoa(int(b.NodeID)))
			}
			entities = append(entities, "")
		}
	}
	for _, e := range entities {
		if e == "" {
			fmt.Fprintf(a.out, "Default configs for %s in the cluster are:\n", typ)
		} else {
			label := "Dynamic"
			if o.describeAll {
				label = "All"
			}
			fmt.Fprintf(a.out, "%s configs for %s %s are:\n", label, strings.TrimSuffix(typ, "s"), e)
		}
		entries, err := a.resourceConfig(typ, e, true, o.describeAll)
		if err != nil {
			return err
		}
		for _, c := range entries {
			var syn []string
			for _, s := range c.ConfigSynonyms {
				syn = append(syn, sourceName(s.Source)+":"+s.Name+"="+nullable(s.Value))
			}
			fmt.Fprintf(a.out, "  %s=%s sensitive=%t synonyms={%s}\n", c.Name, nullable(c.Value), c.IsSensitive, strings.Join(syn, ", "))
		}
	}
	return nil
}

// resourceConfig is getResourceConfig: the entity's configs by
// DescribeConfigs, only those of its dynamic source unless all (broker
// loggers: every entry).
func (a *adminTool) resourceConfig(typ, name string, synonyms, all bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	validBrokerID := func() error {
		if _, err := strconv.ParseInt(name, 10, 32); err != nil {
			return argErrorf("The entity name for %s must be a valid integer broker id, found: %s", typ, name)
		}
		return nil
	}
	var rt kmsg.ConfigResourceType
	source := kmsg.ConfigSource(-1)
	switch typ {
	case typeTopics:
		if name != "" {
			if err := validateTopicName(name); err != nil {
				return nil, err
			}
		}
		rt, source = kmsg.ConfigResourceTypeTopic, kmsg.ConfigSourceDynamicTopicConfig
	case typeBrokers:
		rt, source = kmsg.ConfigResourceTypeBroker, kmsg.ConfigSourceDynamicDefaultBrokerConfig
		if name != "" {
			if err := validBrokerID(); err != nil {
				return nil, err
			}
			source = kmsg.ConfigSourceDynamicBrokerConfig
		}
	case typeBrokerLoggers:
		if name != "" {
			if err := validBrokerID(); err != nil {
				return nil, err
			}
		}
		rt = kmsg.ConfigResourceTypeBrokerLogger
	default:
		return nil, argErrorf("Invalid entity type: %s", typ)
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = rt, name
	req.Resources = append(req.Resources, r)
	req.IncludeSynonyms = synonyms
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, executionError(admintool.ClientError(err, "DESCRIBE_CONFIGS"))
	}
	if len(resp.Resources) != 1 {
		return nil, executionError(fmt.Errorf("DescribeConfigs answered %d resources for one", len(resp.Resources)))
	}
	res := resp.Resources[0]
	if ke := admintool.NewKafkaError(res.ErrorCode, res.ErrorMessage); ke != nil {
		return nil, executionError(ke)
	}
	if all || source < 0 {
		return res.Configs, nil
	}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, c := range res.Configs {
		if c.Source == source {
			out = append(out, c)
		}
	}
	return out, nil
}

// alterBroker sends the broker's complete dynamic config set, changed, with
// AlterConfigs, as Kafka 2.8's tool does; sensitive values it cannot read
// back must be given again.
func (a *adminTool) alterBroker(name string, add map[string]string, del []string) error {
	entries, err := a.resourceConfig(typeBrokers, name, false, false)
	if err != nil {
		return err
	}
	current := map[string]*string{}
	var order []string
	for _, e := range entries {
		if _, ok := current[e.Name]; !ok {
			order = append(order, e.Name)
		}
		current[e.Name] = e.Value
	}
	var invalid []string
	for _, k := range del {
		if _, ok := current[k]; !ok {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	for _, k := range propertiesKeys(add) {
		v := add[k]
		if _, ok := current[k]; !ok {
			order = append(order, k)
		}
		current[k] = &v
	}
	for _, k := range del {
		delete(current, k)
	}
	var missing []string
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
	for _, k := range order {
		v, ok := current[k]
		if !ok {
			continue
		}
		if v == nil {
			missing = append(missing, k)
		}
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, v
		r.Configs = append(r.Configs, c)
	}
	if len(missing) > 0 {
		return argErrorf("All sensitive broker config entries must be specified for --alter, missing entries: Set(%s)", strings.Join(missing, ", "))
	}
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Resources = append(req.Resources, r)
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "ALTER_CONFIGS"))
	}
	for _, res := range resp.Resources {
		if ke := admintool.NewKafkaError(res.ErrorCode, res.ErrorMessage); ke != nil {
			return executionError(ke)
		}
	}
	return nil
}

// alterBrokerLoggers checks every named logger exists on the broker, then
// sets and unsets levels with IncrementalAlterConfigs.
func (a *adminTool) alterBrokerLoggers(name string, add map[string]string, del []string) error {
	entries, err := a.resourceConfig(typeBrokerLoggers, name, true, false)
	if err != nil {
		return err
	}
	valid := map[string]bool{}
	for _, e := range entries {
		valid[e.Name] = true
	}
	var invalid []string
	for _, k := range del {
		if !valid[k] {
			invalid = append(invalid, k)
		}
	}
	keys := propertiesKeys(add)
	for _, k := range keys {
		if !valid[k] {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid broker logger(s): %s", strings.Join(invalid, ","))
	}
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, name
	for _, k := range keys {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := add[k]
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, &v
		r.Configs = append(r.Configs, c)
	}
	for _, k := range del {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		empty := ""
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpDelete, &empty
		r.Configs = append(r.Configs, c)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Resources = append(req.Resources, r)
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "INCREMENTAL_ALTER_CONFIGS"))
	}
	for _, res := range resp.Resources {
		if ke := admintool.NewKafkaError(res.ErrorCode, res.ErrorMessage); ke != nil {
			return executionError(ke)
		}
	}
	return nil
}

// validateTopicName is Topic.validate, whose InvalidTopicException escapes
// ConfigCommand.main.
func validateTopicName(name string) error {
	if err := config.ValidateTopicName(name); err != nil {
		return &commandError{"org.apache.kafka.common.errors.InvalidTopicException: " + err.Error()}
	}
	return nil
}
