package api

// Shared config helpers for DescribeConfigs (32), AlterConfigs (33),
// IncrementalAlterConfigs (44) and CreateTopics (19): Kafka's ConfigHelper
// and ZkAdminManager config paths.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/config"
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

// topicConfigEntry describes one topic config of a topic with overrides,
// following Kafka's source/synonym rules: the topic override (source
// DYNAMIC_TOPIC_CONFIG) comes first, then for each broker synonym the
// explicitly set static value (STATIC_BROKER_CONFIG) and the synonym's
// default (DEFAULT_CONFIG) when it has one. The entry's source is the first
// synonym's, DEFAULT_CONFIG when there is none.
func (a *Apis) topicConfigEntry(tc config.TopicConfig, overrides map[string]string, synonyms bool) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name = tc.Name
	e.ConfigType = kmsg.ConfigType(tc.Type)
	e.IsSensitive = tc.Type == config.TypePassword
	var all []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	value, overridden := overrides[tc.Name]
	if overridden {
		all = append(all, synonym(tc.Name, value, kmsg.ConfigSourceDynamicTopicConfig))
	} else {
		value, _ = a.conf().TopicDefault(tc.Name)
	}
	for _, bk := range tc.BrokerSynonyms {
		if a.conf().IsSet(bk) {
			if v, ok := a.conf().Value(bk); ok {
				all = append(all, synonym(bk, v, kmsg.ConfigSourceStaticBrokerConfig))
			}
		}
		if d, ok := brokerKeyDefault(bk); ok {
			all = append(all, synonym(bk, d, kmsg.ConfigSourceDefaultConfig))
		}
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
	return e
}

func synonym(name, value string, src kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name = name
	v := value
	s.Value = &v
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
	return "", false
}

// nameSet is the set of requested config names; nil (all) for nil names.
func nameSet(names []string) map[string]bool {
	if names == nil {
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
func (a *Apis) describeTopicConfigs(overrides map[string]string, names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := nameSet(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, tc := range config.TopicConfigs() {
		if want != nil && !want[tc.Name] {
			continue
		}
		out = append(out, a.topicConfigEntry(tc, overrides, synonyms))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describeBrokerConfigs lists this broker's static configuration: every key
// Klassik implements, STATIC_BROKER_CONFIG when set in server.properties (or
// an override), DEFAULT_CONFIG otherwise. Nothing is dynamically updatable
// yet, so every entry is read-only.
func (a *Apis) describeBrokerConfigs(names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	want := nameSet(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, k := range config.BrokerKeys() {
		if want != nil && !want[k.Name] {
			continue
		}
		e := kmsg.NewDescribeConfigsResponseResourceConfig()
		e.Name = k.Name
		e.ConfigType = kmsg.ConfigType(k.Type)
		e.IsSensitive = k.Type == config.TypePassword
		e.ReadOnly = true
		v, _ := a.conf().Value(k.Name)
		if !e.IsSensitive && !(v == "" && k.Nullable && !a.conf().IsSet(k.Name)) {
			vv := v
			e.Value = &vv
		}
		e.Source = kmsg.ConfigSourceDefaultConfig
		if a.conf().IsSet(k.Name) {
			e.Source = kmsg.ConfigSourceStaticBrokerConfig
		}
		e.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
		if synonyms {
			if e.Source == kmsg.ConfigSourceStaticBrokerConfig {
				e.ConfigSynonyms = append(e.ConfigSynonyms, synonym(k.Name, v, e.Source))
			}
			if d, ok := brokerKeyDefault(k.Name); ok {
				e.ConfigSynonyms = append(e.ConfigSynonyms, synonym(k.Name, d, kmsg.ConfigSourceDefaultConfig))
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
