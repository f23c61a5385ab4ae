package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
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
	add, err := configsToBeAdded(o.p)
	if err != nil {
		return err
	}
	del := configsToBeDeleted(o.p)
	typ, name := o.types[0], o.names[0]
	switch typ {
	case typeTopics:
		err = a.alterTopic(name, add, del)
	case typeUsers:
		err = a.alterUserScram(name, add, del)
	default:
		return argErrorf("Unsupported entity type: %s", typ)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "Completed updating config for %s %s.\n", strings.TrimSuffix(typ, "s"), name)
	return nil
}

// alterTopic checks the deletions against the topic's dynamic configs,
// then sends IncrementalAlterConfigs with SET and DELETE operations.
func (a *adminTool) alterTopic(topic string, add map[string]string, del []string) error {
	entries, err := a.describeConfigs(topic, false)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range del {
		if !slices.ContainsFunc(entries, func(e kmsg.DescribeConfigsResponseResourceConfig) bool {
			return e.Name == k && e.Source == kmsg.ConfigSourceDynamicTopicConfig
		}) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range add {
			if !yield(k) {
				return
			}
		}
	}) {
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
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range add {
			if !yield(k) {
				return
			}
		}
	}) {
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
	if err := refuseQuotas(add, del); err != nil {
		return err
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
	case typeTopics:
		return a.describeTopics(o)
	case typeUsers:
		return a.describeUserScram(o.names)
	}
	return argErrorf("Invalid entity type: %s", o.types[0])
}

// describeUserScram prints the SCRAM half of
// describeClientQuotaAndUserScramCredentials (Klassik has no quotas to
// describe yet).
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

// describeTopics is describeResourceConfig for topics: the named topic, or
// every topic (internal ones included).
func (a *adminTool) describeTopics(o *options) error {
	topics := o.names
	if len(topics) == 0 {
		ctx, cancel := a.ctx()
		defer cancel()
		req := kmsg.NewPtrMetadataRequest()
		resp, err := req.RequestWith(ctx, a.cl)
		if err != nil {
			return executionError(admintool.ClientError(err, "METADATA"))
		}
		for _, t := range resp.Topics {
			if t.Topic != nil && t.ErrorCode == 0 {
				topics = append(topics, *t.Topic)
			}
		}
		slices.Sort(topics)
	}
	for _, t := range topics {
		label := "Dynamic"
		if o.describeAll {
			label = "All"
		}
		fmt.Fprintf(a.out, "%s configs for topic %s are:\n", label, t)
		entries, err := a.describeConfigs(t, true)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !o.describeAll && e.Source != kmsg.ConfigSourceDynamicTopicConfig {
				continue
			}
			var syn []string
			for _, s := range e.ConfigSynonyms {
				syn = append(syn, sourceName(s.Source)+":"+s.Name+"="+nullable(s.Value))
			}
			fmt.Fprintf(a.out, "  %s=%s sensitive=%t synonyms={%s}\n", e.Name, nullable(e.Value), e.IsSensitive, strings.Join(syn, ", "))
		}
	}
	return nil
}

// describeConfigs reads a topic's configs with DescribeConfigs.
func (a *adminTool) describeConfigs(topic string, synonyms bool) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
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
	return res.Configs, nil
}
