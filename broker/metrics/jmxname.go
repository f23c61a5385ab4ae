package metrics

import (
	"strings"
)

// bean is a go-metrics name read as the Kafka MBean it stands for.
// Klassik registers "kafka.<domain>.<Type>.<Name>[.<key>=<value>]...", the
// dotted form of Kafka's ObjectName "kafka.<domain>:type=<Type>,name=<Name>
// [,<key>=<value>]..." with the key properties in Kafka's order.
type bean struct {
	domain string // after "kafka.": "server", "coordinator.group"
	typ    string
	name   string
	tags   []tag
}

type tag struct{ key, value string }

// objectName is the MBean's name without its tags, for help texts:
// kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec.
func (b bean) objectName() string {
	return "kafka." + b.domain + ":type=" + b.typ + ",name=" + b.name
}

// parseBean reads a go-metrics name. ok is false for names outside the
// Yammer scheme: not under "kafka.", or a Kafka Metrics group (a type with
// a hyphen, such as socket-server-metrics), which Kafka publishes with
// attribute names the JMX exporter's Kafka rules do not match.
//
// Tag values may contain dots (topic names do) but never "=" (topic names
// are [a-zA-Z0-9._-]), so a tag starts at a dot followed by an
// identifier and "=".
func parseBean(s string) (bean, bool) {
	var b bean
	if !strings.HasPrefix(s, "kafka.") {
		return b, false
	}
	head, rest := s, ""
	if eq := strings.IndexByte(s, '='); eq >= 0 {
		dot := strings.LastIndexByte(s[:eq], '.')
		if dot < 0 {
			return b, false
		}
		head, rest = s[:dot], s[dot+1:]
	}
	// head = kafka.<domain...>.<Type>.<Name>
	nameDot := strings.LastIndexByte(head, '.')
	if nameDot < 0 {
		return b, false
	}
	typeDot := strings.LastIndexByte(head[:nameDot], '.')
	if typeDot <= len("kafka") {
		return b, false
	}
	b.domain = head[len("kafka."):typeDot]
	b.typ = head[typeDot+1 : nameDot]
	b.name = head[nameDot+1:]
	if b.domain == "" || b.typ == "" || b.name == "" || strings.ContainsRune(b.typ, '-') {
		return b, false
	}
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return b, false
		}
		key := rest[:eq]
		val := rest[eq+1:]
		end := nextTag(val)
		b.tags = append(b.tags, tag{key, val[:end]})
		if end == len(val) {
			break
		}
		rest = val[end+1:]
	}
	return b, true
}

// nextTag returns the index of the dot that starts the next ".key=" in v,
// or len(v).
func nextTag(v string) int {
	for i := 0; i < len(v); i++ {
		if v[i] != '.' {
			continue
		}
		j := i + 1
		// Keys may have hyphens: Kafka's quota metrics tag client-id.
		for j < len(v) && (isIdent(v[j]) || v[j] == '-') {
			j++
		}
		if j > i+1 && j < len(v) && v[j] == '=' {
			return i
		}
	}
	return len(v)
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isWord is the rules' (\w+): the domain must be one word.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}

// attribute is an MBean attribute the Kafka rules export.
type attribute int

const (
	attrValue      attribute = iota // Gauge.Value
	attrCount                       // Meter/Histogram/Timer/Counter.Count
	attrPercentile                  // Histogram/Timer NNthPercentile
	attrMeanRate                    // Meter.MeanRate (only the Percent rule)
)

// export is what one rule of the JMX exporter's kafka-2_0_0.yml makes of
// one attribute: a lower-case family name, its type and its labels.
type export struct {
	name        string
	counter     bool // COUNTER, else GAUGE
	labelNames  []string
	labelValues []string
}

// rule applies the rules of prometheus/jmx_exporter
// example_configs/kafka-2_0_0.yml (lowercaseOutputName: true), first match
// wins, to one attribute of b. The percentile rules add the "quantile"
// label themselves (the caller appends it). ok is false when no rule
// matches: the exporter drops such attributes.
func rule(b bean, a attribute) (export, bool) {
	var e export
	n := len(b.tags)
	// Special cases: kafka.server with clientId, topic, partition (fetcher
	// lag) or clientId, brokerHost, brokerPort, Value only.
	if b.domain == "server" && n == 3 && a == attrValue {
		switch {
		case b.tags[0].key == "clientId" && b.tags[1].key == "topic" && b.tags[2].key == "partition":
			e.name = safe("kafka_server_" + b.typ + "_" + b.name)
			e.addLabel("clientId", b.tags[0].value)
			e.addLabel("topic", b.tags[1].value)
			e.addLabel("partition", b.tags[2].value)
			return e, true
		case b.tags[0].key == "clientId" && b.tags[1].key == "brokerHost" && b.tags[2].key == "brokerPort":
			e.name = safe("kafka_server_" + b.typ + "_" + b.name)
			e.addLabel("clientId", b.tags[0].value)
			e.addLabel("broker", b.tags[1].value+":"+b.tags[2].value)
			return e, true
		}
	}
	// kafka.coordinator.(\w+)<type, name><>Value
	if sub, ok := strings.CutPrefix(b.domain, "coordinator."); ok && isWord(sub) && n == 0 && a == attrValue {
		e.name = safe("kafka_coordinator_" + sub + "_" + b.typ + "_" + b.name)
		return e, true
	}
	if !isWord(b.domain) {
		return e, false
	}
	tags := b.tags
	if n > 2 {
		// The generic rules take two tags; the greedy name=(.+) swallows
		// the others (", key=value" each) into the name. Only the special
		// cases above are meant for three tags, so a per-second name with
		// more than two (whose match would put "key=value, key" into a
		// label name) is left unexported.
		if _, perSec := cutPerSec(b.name); perSec && a == attrCount || a == attrMeanRate {
			return e, false
		}
		var sb strings.Builder
		sb.WriteString(b.name)
		for _, t := range tags[:n-2] {
			sb.WriteString(", " + t.key + "=" + t.value)
		}
		b.name, tags, n = sb.String(), tags[n-2:], 2
	}
	prefix := "kafka_" + b.domain + "_" + b.typ + "_"
	switch a {
	case attrCount:
		// Per-second counters: name=(.+)PerSec\w* (greedy: the last PerSec
		// followed by word characters only).
		if base, ok := cutPerSec(b.name); ok {
			e.name = safe(prefix + base + "_total")
		} else {
			e.name = safe(prefix + b.name + "_count")
		}
		e.counter = true
	case attrValue, attrPercentile:
		e.name = safe(prefix + b.name)
	case attrMeanRate:
		base, ok := cutPercent(b.name)
		if !ok || n != 0 {
			return e, false
		}
		e.name = safe(prefix + base + "_percent")
		return e, true
	}
	for _, t := range tags {
		e.addLabel(t.key, t.value)
	}
	return e, true
}

// addLabel adds a label as the exporter does: a safe label name, dropped
// when the name or the value is empty.
func (e *export) addLabel(name, value string) {
	name = safeLabel(name)
	if name == "" || value == "" {
		return
	}
	e.labelNames = append(e.labelNames, name)
	e.labelValues = append(e.labelValues, value)
}

// cutPerSec matches (.+)PerSec\w* and returns $1.
func cutPerSec(name string) (string, bool) {
	return cutSuffixWord(name, "PerSec")
}

// cutPercent matches (.+)Percent\w* and returns $1.
func cutPercent(name string) (string, bool) {
	return cutSuffixWord(name, "Percent")
}

func cutSuffixWord(name, word string) (string, bool) {
	for i := strings.LastIndex(name, word); i > 0; i = strings.LastIndex(name[:i], word) {
		if isWord(name[i+len(word):]) || i+len(word) == len(name) {
			return name[:i], true
		}
	}
	return "", false
}

// safe is the exporter's toSafeName followed by lowercaseOutputName:
// characters outside [a-zA-Z0-9:_] become "_", runs of "_" merge, a
// leading digit gets a "_" in front.
func safe(s string) string { return strings.ToLower(safeLabel(s)) }

func safeLabel(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 1)
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		sb.WriteByte('_')
	}
	under := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		legal := c == ':' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !legal || c == '_' {
			if !under {
				sb.WriteByte('_')
				under = true
			}
			continue
		}
		sb.WriteByte(c)
		under = false
	}
	return sb.String()
}
