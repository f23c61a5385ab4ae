package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/security"
)

// Quota keys (Kafka's QuotaConfigs): of users, clients and <user, client>
// pairs, in ConfigDef order, and of IPs.
var quotaKeys = []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}

const ipQuotaKey = "connection_creation_rate"

func isQuotaKey(k string) bool { return slices.Contains(quotaKeys, k) }

// quotaKeyType is the ConfigDef type of a quota key.
func quotaKeyType(k string) string {
	switch k {
	case "producer_byte_rate", "consumer_byte_rate":
		return "LONG"
	case ipQuotaKey:
		return "INT"
	}
	return "DOUBLE"
}

// ClientQuotaEntity's entity types.
const (
	quotaUser     = "user"
	quotaClientID = "client-id"
	quotaIP       = "ip"
)

func quotaEntityType(t string) (string, error) {
	switch t {
	case typeUsers:
		return quotaUser, nil
	case typeClients:
		return quotaClientID, nil
	case typeIPs:
		return quotaIP, nil
	}
	return "", argErrorf("Unexpected entity type %s", t)
}

// quotaEntry is one entity of a DescribeClientQuotas answer, its
// components and values in the order ConfigCommand prints them.
type quotaEntry struct {
	entity []kmsg.DescribeClientQuotasResponseEntryEntity
	values []kmsg.DescribeClientQuotasResponseEntryValue
}

// describeClientQuotas is getAllClientQuotasConfigs: a strict filter with
// one component per entity type (the name, the default for "", any entity
// of the type when names run out). The entries come back in the order of
// the admin client's HashMap.
func (a *adminTool) describeClientQuotas(types, names []string) ([]quotaEntry, error) {
	if len(names) > len(types) {
		return nil, argErrorf("More entity names specified than entity types")
	}
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	req.Strict = true
	for i, t := range types {
		et, err := quotaEntityType(t)
		if err != nil {
			return nil, err
		}
		c := kmsg.NewDescribeClientQuotasRequestComponent()
		c.EntityType = et
		switch {
		case i >= len(names):
			c.MatchType = 2 // any entity of the type
		case names[i] == "":
			c.MatchType = 1 // the default entity
		default:
			name := names[i]
			c.MatchType, c.Match = 0, &name
		}
		req.Components = append(req.Components, c)
	}
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, executionError(admintool.ClientError(err, "DESCRIBE_CLIENT_QUOTAS"))
	}
	if ke := admintool.NewKafkaError(resp.ErrorCode, resp.ErrorMessage); ke != nil {
		return nil, executionError(ke)
	}
	// ClientQuotaEntity.hashCode: the HashMap hash of its entries.
	entityHash := func(e kmsg.DescribeClientQuotasResponseEntry) int32 {
		var h int32
		for _, c := range e.Entity {
			ch := jvm.StringHashCode(c.Type)
			if c.Name != nil {
				ch ^= jvm.StringHashCode(*c.Name)
			}
			h += ch
		}
		return h
	}
	keyHash := func(v kmsg.DescribeClientQuotasResponseEntryValue) int32 { return jvm.StringHashCode(v.Key) }
	var out []quotaEntry
	for _, e := range jvm.HashMapOrder(resp.Entries, len(resp.Entries), entityHash) {
		out = append(out, quotaEntry{entity: e.Entity, values: jvm.HashMapOrder(e.Values, len(e.Values), keyHash)})
	}
	return out, nil
}

// printQuotas is describeQuotaConfigs' output.
func printQuotas(out io.Writer, entries []quotaEntry) {
	for _, q := range entries {
		var parts []string
		for _, et := range []struct{ typ, label string }{{quotaUser, "user-principal"}, {quotaClientID, "client-id"}, {quotaIP, "ip"}} {
			for _, c := range q.entity {
				if c.Type != et.typ {
					continue
				}
				if c.Name != nil {
					parts = append(parts, fmt.Sprintf("%s '%s'", et.label, *c.Name))
				} else {
					parts = append(parts, "the default "+et.label)
				}
			}
		}
		var vals []string
		for _, v := range q.values {
			vals = append(vals, v.Key+"="+jvm.DoubleToString(v.Value))
		}
		fmt.Fprintf(out, "Quota configs for %s are %s\n", strings.Join(parts, ", "), strings.Join(vals, ", "))
	}
}

// describeQuotaConfigs prints the quotas of the entities named.
func (a *adminTool) describeQuotaConfigs(types, names []string) error {
	entries, err := a.describeClientQuotas(types, names)
	if err != nil {
		return err
	}
	printQuotas(a.out, entries)
	return nil
}

// describeUsersClients is describeClientQuotaAndUserScramCredentialConfigs:
// the quotas, then (for users alone, none of them the default) their SCRAM
// credentials.
func (a *adminTool) describeUsersClients(types, names []string) error {
	if err := a.describeQuotaConfigs(types, names); err != nil {
		return err
	}
	if slices.Contains(types, typeClients) || slices.Contains(names, "") {
		return nil
	}
	return a.describeUserScram(names)
}

// alterUsersClients is alterConfig's users/clients branch: quota keys go
// through AlterClientQuotas, SCRAM credentials (users alone) through
// AlterUserScramCredentials.
func (a *adminTool) alterUsersClients(types, names []string, add map[string]string, del []string) error {
	addKeys := propertiesKeys(add)
	var unknownAdd, scramAdd, unknownDel, scramDel []string
	hasQuotaAdd, hasQuotaDel := false, false
	for _, k := range addKeys {
		switch {
		case security.IsScramMechanism(k):
			scramAdd = append(scramAdd, k)
		case isQuotaKey(k):
			hasQuotaAdd = true
		default:
			unknownAdd = append(unknownAdd, k)
		}
	}
	for _, k := range del {
		switch {
		case security.IsScramMechanism(k):
			scramDel = append(scramDel, k)
		case isQuotaKey(k):
			hasQuotaDel = true
		default:
			unknownDel = append(unknownDel, k)
		}
	}
	if types[0] == typeClients || len(types) == 2 {
		if len(unknownAdd)+len(scramAdd) > 0 {
			return argErrorf("Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(%s)", strings.Join(append(unknownAdd, scramAdd...), ", "))
		}
		if len(unknownDel)+len(scramDel) > 0 {
			return argErrorf("Only quota configs can be deleted for 'clients' using --bootstrap-server. Unexpected config names: ArrayBuffer(%s)", strings.Join(append(unknownDel, scramDel...), ", "))
		}
	} else {
		if len(unknownAdd) > 0 {
			return argErrorf("Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set(%s)", strings.Join(unknownAdd, ", "))
		}
		if len(unknownDel) > 0 {
			return argErrorf("Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: ArrayBuffer(%s)", strings.Join(unknownDel, ", "))
		}
		if len(scramAdd)+len(scramDel) > 0 {
			if slices.Contains(names, "") {
				return argErrorf("The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.")
			}
			if hasQuotaAdd || hasQuotaDel {
				return argErrorf("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.")
			}
		}
	}
	if hasQuotaAdd || hasQuotaDel {
		return a.alterQuotaConfigs(types, names, add, del)
	}
	return a.alterUserScram(names[0], add, del)
}

// alterIPs is alterConfig's ips branch.
func (a *adminTool) alterIPs(types, names []string, add map[string]string, del []string) error {
	var unknown []string
	for _, k := range append(propertiesKeys(add), del...) {
		if k != ipQuotaKey {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return argErrorf("Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: %s", strings.Join(unknown, ","))
	}
	return a.alterQuotaConfigs(types, names, add, del)
}

// alterQuotaConfigs checks the deletions against the entity's quotas and
// sends AlterClientQuotas.
func (a *adminTool) alterQuotaConfigs(types, names []string, add map[string]string, del []string) error {
	if len(types) != len(names) {
		return argErrorf("Exactly one entity name must be specified for every entity type")
	}
	entries, err := a.describeClientQuotas(types, names)
	if err != nil {
		return err
	}
	var invalid []string
	for _, k := range del {
		if len(entries) == 0 || !slices.ContainsFunc(entries[0].values, func(v kmsg.DescribeClientQuotasResponseEntryValue) bool { return v.Key == k }) {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return argErrorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for i, t := range types {
		et, _ := quotaEntityType(t)
		c := kmsg.NewAlterClientQuotasRequestEntryEntity()
		c.Type = et
		if names[i] != "" {
			name := names[i]
			c.Name = &name
		}
		e.Entity = append(e.Entity, c)
	}
	for _, k := range propertiesKeys(add) {
		v, err := strconv.ParseFloat(strings.TrimSpace(add[k]), 64)
		if err != nil {
			return argErrorf("Cannot parse quota configuration value for %s: %s", k, add[k])
		}
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = k, v
		e.Ops = append(e.Ops, op)
	}
	for _, k := range del {
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Remove = k, true
		e.Ops = append(e.Ops, op)
	}
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = append(req.Entries, e)
	ctx, cancel := a.ctx()
	defer cancel()
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return executionError(admintool.ClientError(err, "ALTER_CLIENT_QUOTAS"))
	}
	for _, r := range resp.Entries {
		if ke := admintool.NewKafkaError(r.ErrorCode, r.ErrorMessage); ke != nil {
			return executionError(ke)
		}
	}
	return nil
}

// validateQuotaConfigs is DynamicConfig's validate for users (withScram),
// clients and <user, client> pairs, or IPs (ip): unknown keys are refused,
// then the values parsed with the keys' types, in ConfigDef order.
func validateQuotaConfigs(configs map[string]string, withScram, ip bool) error {
	defined := slices.Clone(quotaKeys)
	if withScram {
		defined = append([]string{security.MechanismScramSHA256, security.MechanismScramSHA512}, defined...)
	}
	if ip {
		defined = []string{ipQuotaKey}
	}
	var unknown []string
	for k := range configs {
		if !slices.Contains(defined, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return argErrorf("requirement failed: Unknown Dynamic Configuration: HashSet(%s).", strings.Join(unknown, ", "))
	}
	for _, k := range defined {
		v, ok := configs[k]
		if !ok || security.IsScramMechanism(k) {
			continue
		}
		s := strings.TrimSpace(v)
		typ := quotaKeyType(k)
		var err error
		switch typ {
		case "LONG":
			_, err = strconv.ParseInt(s, 10, 64)
		case "INT":
			var n int64
			n, err = strconv.ParseInt(s, 10, 32)
			if err == nil && n < 0 {
				return configException("Invalid value %s for configuration %s: Value must be at least 0", v, k)
			}
		default:
			_, err = strconv.ParseFloat(s, 64)
		}
		if err != nil {
			return configException("Invalid value %s for configuration %s: Not a number of type %s", v, k, typ)
		}
	}
	return nil
}

// configException is a ConfigException escaping ConfigCommand.main: the
// "Error while executing config command" form.
func configException(format string, args ...any) error {
	return &commandError{"org.apache.kafka.common.config.ConfigException: " + fmt.Sprintf(format, args...)}
}
