package api

// Shared config helpers for DescribeConfigs (32), AlterConfigs (33),
// IncrementalAlterConfigs (44) and CreateTopics (19): Kafka's ConfigHelper
// and ZkAdminManager config paths.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

// validateTopicConfigs checks topic overrides, answering INVALID_CONFIG with
// Kafka's wording.
func (a *Apis) validateTopicConfigs(cfgs map[string]string) error {
	if len(cfgs) == 0 {
		return nil
	}
	if err := config.ValidateTopicConfig(cfgs); err != nil {
		return fmt.Errorf("%w: %s", kerr.InvalidConfig, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// topicConfigEntry describes one topic config as Kafka's ConfigHelper
// does: the topic override (source DYNAMIC_TOPIC_CONFIG) first, then the
// broker synonyms of the key the topic config defaults from, layer by
// layer (dynamic per-broker, dynamic cluster default, static, default;
// brokerSynonyms). The entry's source is the first synonym's,
// DEFAULT_CONFIG when there is none.
func (a *Apis) topicConfigEntry(cur *config.Config, tc config.TopicConfig, overrides map[string]string, synonyms, docs bool) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name = tc.Name
	e.ConfigType = kmsg.ConfigType(tc.Type)
	e.IsSensitive = tc.Type == config.TypePassword
	var all []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	value, overridden := overrides[tc.Name]
	if overridden {
		all = append(all, synonym(tc.Name, value, kmsg.ConfigSourceDynamicTopicConfig, e.IsSensitive))
	} else {
		value, _ = cur.TopicDefault(tc.Name)
	}
	if len(tc.BrokerSynonyms) > 0 {
		all = append(all, a.brokerSynonyms(tc.BrokerSynonyms[0], tc.BrokerSynonyms, e.IsSensitive)...)
	}
	e.Source = kmsg.ConfigSourceDefaultConfig
	if len(all) > 0 {
		e.Source = all[0].Source
	}
	e.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
	if !e.IsSensitive {
		v := value
		e.Value = &v
	}
	if synonyms {
		e.ConfigSynonyms = all
	}
	if docs {
		d := tc.Doc
		e.Documentation = &d
	}
	return e
}

// brokerSynonyms is Kafka's ConfigHelper.configSynonyms: the values of
// names (name and its synonyms, most specific first) in each layer, layers
// in precedence order, then everything before the first entry for name
// itself dropped (so log.retention.hours does not list log.retention.ms).
func (a *Apis) brokerSynonyms(name string, names []string, sensitive bool) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	clusterDefault, perBroker := a.dyn.Layers()
	static := a.dyn.Static()
	var all []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	for _, n := range names {
		if v, ok := perBroker[n]; ok {
			all = append(all, synonym(n, v, kmsg.ConfigSourceDynamicBrokerConfig, sensitive))
		}
	}
	for _, n := range names {
		if v, ok := clusterDefault[n]; ok {
			all = append(all, synonym(n, v, kmsg.ConfigSourceDynamicDefaultBrokerConfig, sensitive))
		}
	}
	for _, n := range names {
		if v, ok := static.StaticValue(n); ok {
			all = append(all, synonym(n, v, kmsg.ConfigSourceStaticBrokerConfig, sensitive))
		}
	}
	for _, n := range names {
		if d, ok := brokerKeyDefault(n); ok {
			all = append(all, synonym(n, d, kmsg.ConfigSourceDefaultConfig, sensitive))
		}
	}
	for len(all) > 0 && all[0].Name != name {
		all = all[1:]
	}
	return all
}

func synonym(name, value string, src kmsg.ConfigSource, sensitive bool) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name = name
	if !sensitive {
		v := value
		s.Value = &v
	}
	s.Source = src
	return s
}

// brokerKeyDefault returns Kafka's default of a broker key, false when the
// key has none (nullable) or is unknown.
func brokerKeyDefault(name string) (string, bool) {
	for _, k := range config.BrokerKeys() {
		if k.Name == name {
			if k.Nullable && k.Default == "" {
				return "", false
			}
			return k.Default, true
		}
	}
	for _, k := range config.DynamicOnlyKeys() {
		if k.Name == name {
			return k.Default, true
		}
	}
	return "", false
}

// nameSet is the set of requested config names; nil (all) for nil or no
// names, as Kafka treats both.
func nameSet(names []string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	return want
}

// describeTopicConfigs lists the requested (nil = all) configs of a topic,
// sorted by name as Kafka's tools print them.
func (a *Apis) describeTopicConfigs(overrides map[string]string, names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := nameSet(names)
	cur := a.conf()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, tc := range config.TopicConfigs() {
		if want != nil && !want[tc.Name] {
			continue
		}
		out = append(out, a.topicConfigEntry(cur, tc, overrides, synonyms, docs))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// brokerSynonymNames is Kafka's DynamicBrokerConfig.brokerConfigSynonyms
// (with listener overrides matched): the keys that set the same value,
// most specific first.
func brokerSynonymNames(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	if rest, ok := strings.CutPrefix(name, "listener.name."); ok {
		if _, base, ok := strings.Cut(rest, "."); ok && base != "" {
			for _, m := range []string{"sasl.jaas.config", "connections.max.reauth.ms"} {
				if strings.HasSuffix(base, m) {
					return []string{name, m}
				}
			}
			return []string{name, base}
		}
	}
	return []string{name}
}

// brokerConfigEntry is Kafka's createBrokerConfigEntry. For the cluster
// default (perBroker false) only the DYNAMIC_DEFAULT_BROKER_CONFIG synonyms
// are listed. Password (and unknown-type) values are null.
func (a *Apis) brokerConfigEntry(name, value string, hasValue, perBroker, synonyms, docs bool) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name = name
	typ, known := config.KeyType(name)
	e.ConfigType = kmsg.ConfigType(typ)
	e.IsSensitive = !known || typ == config.TypePassword
	if hasValue && !e.IsSensitive {
		v := value
		e.Value = &v
	}
	all := a.brokerSynonyms(name, brokerSynonymNames(name), e.IsSensitive)
	if !perBroker {
		all = slices.DeleteFunc(all, func(s kmsg.DescribeConfigsResponseResourceConfigConfigSynonym) bool {
			return s.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig
		})
	}
	e.Source = kmsg.ConfigSourceDefaultConfig
	if len(all) > 0 {
		e.Source = all[0].Source
	}
	e.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
	e.ReadOnly = !config.IsDynamicBrokerKey(name) && !isDynamicOnly(name)
	if synonyms {
		e.ConfigSynonyms = all
	}
	if docs {
		d := config.KeyDoc(name)
		for _, k := range config.DynamicOnlyKeys() {
			if k.Name == name {
				d = k.Doc
			}
		}
		e.Documentation = &d
	}
	return e
}

func isDynamicOnly(name string) bool {
	return slices.ContainsFunc(config.DynamicOnlyKeys(), func(k config.Key) bool { return k.Name == name })
}

// describeBrokerConfigs lists this broker's configuration: every key
// Klassik implements with its current value, plus the keys set only in a
// dynamic layer (dynamic-only, listener-prefixed and custom keys).
func (a *Apis) describeBrokerConfigs(names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := nameSet(names)
	cur := a.conf()
	clusterDefault, perBroker := a.dyn.Layers()
	seen := map[string]bool{}
	var out []kmsg.DescribeConfigsResponseResourceConfig
	add := func(name, value string, hasValue bool) {
		if seen[name] || (want != nil && !want[name]) {
			return
		}
		seen[name] = true
		out = append(out, a.brokerConfigEntry(name, value, hasValue, true, synonyms, docs))
	}
	for _, k := range config.BrokerKeys() {
		v, _ := cur.Value(k.Name)
		add(k.Name, v, !(v == "" && k.Nullable && !cur.IsSet(k.Name) && cur.Source(k.Name) == config.SourceDefault))
	}
	for _, layer := range []map[string]string{perBroker, clusterDefault} {
		for k, v := range layer {
			if cv, ok := cur.Value(k); ok {
				v = cv
			}
			add(k, v, true)
		}
	}
	for _, k := range config.StaticListenerKeys(a.dyn.Static()) {
		v, _ := a.dyn.Static().StaticValue(k)
		add(k, v, true)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describeBrokerDefaults lists the dynamic cluster-default configs
// (/config/brokers/<default>), Kafka's answer for the empty broker name.
func (a *Apis) describeBrokerDefaults(names []string, synonyms, docs bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := nameSet(names)
	clusterDefault, _ := a.dyn.Layers()
	out := []kmsg.DescribeConfigsResponseResourceConfig{}
	for k, v := range clusterDefault {
		if want != nil && !want[k] {
			continue
		}
		out = append(out, a.brokerConfigEntry(k, v, true, false, synonyms, docs))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// configResourceString is Kafka's ConfigResource.toString.
func configResourceString(typ kmsg.ConfigResourceType, name string) string {
	t := map[kmsg.ConfigResourceType]string{kmsg.ConfigResourceTypeTopic: "TOPIC", kmsg.ConfigResourceTypeBroker: "BROKER",
		kmsg.ConfigResourceTypeBrokerLogger: "BROKER_LOGGER"}[typ]
	if t == "" {
		t = "UNKNOWN"
	}
	return fmt.Sprintf("ConfigResource(type=%s, name='%s')", t, name)
}

// brokerEntity resolves the name of a BROKER resource of an alteration
// (ZkAdminManager.getBrokerId): "" is the cluster default; any other name
// must be this broker's id, because a broker validates and applies its own
// configuration (clients send a per-broker alteration to that broker).
func (a *Apis) brokerEntity(name string) (entity string, perBroker bool, err error) {
	if name == "" {
		return zkpaths.ConfigEntityDefault, false, nil
	}
	id, perr := strconv.ParseInt(name, 10, 32)
	if perr != nil {
		return "", false, denied(kerr.InvalidRequest, "Broker id must be an integer, but it is: "+name)
	}
	if int32(id) != a.brokerID {
		return "", false, denied(kerr.InvalidRequest, fmt.Sprintf("Unexpected broker id, expected %d, but received %s", a.brokerID, name))
	}
	return name, true, nil
}

// alterBrokerConfigs validates a complete new dynamic config set of a
// broker entity and, unless validateOnly, stores it (passwords encoded)
// with a change notification (ZkAdminManager.alterBrokerConfigs). Config
// errors answer INVALID_REQUEST with Kafka's "Invalid config value for
// resource ..." text.
func (a *Apis) alterBrokerConfigs(name, entity string, perBroker bool, props map[string]string, validateOnly bool) error {
	invalid := func(msg string) error {
		return denied(kerr.InvalidRequest, fmt.Sprintf("Invalid config value for resource %s: %s", configResourceString(kmsg.ConfigResourceTypeBroker, name), msg))
	}
	if err := config.ValidateDynamicBrokerConfigs(props, perBroker); err != nil {
		return invalid(err.Error())
	}
	clusterDefault, broker := a.dyn.Layers()
	if perBroker {
		broker = props
	} else {
		clusterDefault = props
	}
	if err := a.dyn.Validate(clusterDefault, broker); err != nil {
		a.logger.Info("refused a dynamic broker config update", "resource", entity, "err", err)
		return invalid("Invalid dynamic configuration: " + strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	stored, err := config.ToPersistentProps(props, perBroker, a.conf())
	if err != nil {
		return invalid(err.Error())
	}
	if validateOnly {
		return nil
	}
	if perBroker && a.reloadFiles != nil {
		if err := a.reloadFiles(slices.Sorted(maps.Keys(props))); err != nil {
			return invalid(err.Error())
		}
	}
	if err := a.zk.ChangeEntityConfigs(zkpaths.ConfigTypeBroker, entity, stored); err != nil {
		return err
	}
	a.logger.Info("updated dynamic broker configs", "entity", entity, "keys", slices.Sorted(maps.Keys(props)))
	return nil
}

// currentBrokerConfigs reads an entity's stored dynamic configs, decoded
// (ZkAdminManager's fetchEntityConfig + fromPersistentProps), the base of
// an incremental alteration.
func (a *Apis) currentBrokerConfigs(entity string, perBroker bool) (map[string]string, error) {
	stored, err := a.zk.GetEntityConfigs(zkpaths.ConfigTypeBroker, entity)
	if err != nil {
		return nil, err
	}
	return config.FromPersistentProps(stored, perBroker, a.conf(), func(msg string, args ...any) {
		a.logger.Warn(msg, append(args, "entity", entity)...)
	}), nil
}

// applyIncrementalBroker applies IncrementalAlterConfigs operations to a
// broker entity's configs as ZkAdminManager.prepareIncrementalConfigs:
// APPEND and SUBTRACT only for LIST keys, starting from the key's default
// when the entity does not set it; APPEND keeps duplicates, SUBTRACT
// removes one occurrence of each value, as Kafka's list operations do.
func applyIncrementalBroker(current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	var dups, nulls []string
	seen := map[string]int{}
	for _, op := range ops {
		seen[op.Name]++
		if seen[op.Name] == 2 {
			dups = append(dups, op.Name)
		}
		if op.Value == nil && op.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, fmt.Sprintf("%s:%s", opName(op.Op), op.Name))
		}
	}
	if len(dups) > 0 {
		return nil, denied(kerr.InvalidRequest, "Error due to duplicate config keys : "+strings.Join(dups, ","))
	}
	if len(nulls) > 0 {
		return nil, denied(kerr.InvalidRequest, "Null value not supported for : "+strings.Join(nulls, ","))
	}
	next := maps.Clone(current)
	if next == nil {
		next = map[string]string{}
	}
	for _, op := range ops {
		value := ""
		if op.Value != nil {
			value = *op.Value
		}
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			next[op.Name] = value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(next, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			verb := "append"
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
				verb = "subtract"
			}
			if t, ok := config.KeyType(op.Name); !ok || t != config.TypeList {
				return nil, denied(kerr.InvalidRequest, fmt.Sprintf("Config value %s is not allowed for config key: %s", verb, op.Name))
			}
			cur, ok := next[op.Name]
			if !ok {
				cur, _ = brokerKeyDefault(op.Name)
			}
			items := strings.Split(cur, ",")
			if cur == "" {
				items = nil
			}
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				items = append(items, strings.Split(value, ",")...)
			} else {
				for _, v := range strings.Split(value, ",") {
					if i := slices.Index(items, v); i >= 0 {
						items = slices.Delete(items, i, i+1)
					}
				}
			}
			next[op.Name] = strings.Join(items, ",")
		default:
			return nil, denied(kerr.InvalidRequest, fmt.Sprintf("Unknown alter config operation %d for %s", op.Op, op.Name))
		}
	}
	return next, nil
}

func opName(op kmsg.IncrementalAlterConfigOp) string {
	switch op {
	case kmsg.IncrementalAlterConfigOpSet:
		return "SET"
	case kmsg.IncrementalAlterConfigOpDelete:
		return "DELETE"
	case kmsg.IncrementalAlterConfigOpAppend:
		return "APPEND"
	case kmsg.IncrementalAlterConfigOpSubtract:
		return "SUBTRACT"
	}
	return strconv.Itoa(int(op))
}

// resourceKey identifies a config resource for duplicate detection.
type resourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// duplicates returns the resources named more than once; Kafka answers all
// of them with INVALID_REQUEST.
func duplicates(keys []resourceKey) map[resourceKey]bool {
	seen := map[resourceKey]int{}
	for _, k := range keys {
		seen[k]++
	}
	d := map[resourceKey]bool{}
	for k, n := range seen {
		if n > 1 {
			d[k] = true
		}
	}
	return d
}
