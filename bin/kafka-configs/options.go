package main

import (
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
)

const helpText = "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip"

// Entity types (Kafka's ConfigType plus broker-loggers).
const (
	typeTopics        = zkpaths.ConfigTypeTopic
	typeClients       = zkpaths.ConfigTypeClient
	typeUsers         = zkpaths.ConfigTypeUser
	typeBrokers       = zkpaths.ConfigTypeBroker
	typeIPs           = zkpaths.ConfigTypeIP
	typeBrokerLoggers = "broker-loggers"
)

// zkTypes and bootstrapTypes are the entity types each mode accepts
// (Kafka's ZkSupportedConfigTypes and BrokerSupportedConfigTypes).
var (
	zkTypes        = []string{typeTopics, typeClients, typeUsers, typeBrokers, typeIPs}
	bootstrapTypes = []string{typeTopics, typeClients, typeUsers, typeBrokers, typeIPs, typeBrokerLoggers}
)

func addConfigHelp() string {
	var topics []string
	for _, t := range config.TopicConfigs() {
		topics = append(topics, t.Name)
	}
	sort.Strings(topics)
	list := func(names []string) string {
		names = slices.Sorted(slices.Values(names))
		return "\n\t" + strings.Join(names, "\n\t") + "\n"
	}
	return "Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'. The following is a list of valid configurations: " +
		"For entity-type 'topics': " + list(topics) +
		"For entity-type 'brokers': " + list(brokerConfigNames()) +
		"For entity-type 'users': " + list(append(slices.Clone(quotaKeys), security.MechanismScramSHA256, security.MechanismScramSHA512)) +
		"For entity-type 'clients': " + list(quotaKeys) +
		"For entity-type 'ips': " + list([]string{ipQuotaKey}) +
		"Entity types 'users' and 'clients' may be specified together to update config for clients of a specific user."
}

// specs are kafka-configs.sh's options (Kafka's ConfigCommandOptions).
var specs = []admintool.Spec{
	{Name: "add-config", HasArg: true, ArgName: "String", Help: addConfigHelp()},
	{Name: "add-config-file", HasArg: true, ArgName: "String", Help: "Path to a properties file with configs to add. See add-config for a list of valid configurations."},
	{Name: "all", Help: "List all configs for the given topic, broker, or broker-logger entity (includes static configuration when the entity type is brokers)"},
	{Name: "alter", Help: "Alter the configuration for the entity."},
	{Name: "bootstrap-server", HasArg: true, ArgName: "server to connect to", Help: "The Kafka server to connect to. This is required for describing and altering broker configs."},
	{Name: "broker", HasArg: true, ArgName: "String", Help: "The broker's ID."},
	{Name: "broker-defaults", Help: "The config defaults for all brokers."},
	{Name: "broker-logger", HasArg: true, ArgName: "String", Help: "The broker's ID for its logger config."},
	{Name: "client", HasArg: true, ArgName: "String", Help: "The client's ID."},
	{Name: "client-defaults", Help: "The config defaults for all clients."},
	{Name: "command-config", HasArg: true, ArgName: "command config property file", Help: "Property file containing configs to be passed to Admin Client. This is used only with --bootstrap-server option for describing and altering broker configs."},
	{Name: "delete-config", HasArg: true, ArgName: "String", Multi: true, Help: "config keys to remove 'k1,k2'"},
	{Name: "describe", Help: "List configs for the given entity."},
	{Name: "entity-default", Help: "Default entity name for clients/users/brokers/ips (applies to corresponding entity type in command line)"},
	{Name: "entity-name", HasArg: true, ArgName: "String", Multi: true, Help: "Name of entity (topic name/client id/user principal name/broker id/ip)"},
	{Name: "entity-type", HasArg: true, ArgName: "String", Multi: true, Help: "Type of entity (topics/clients/users/brokers/broker-loggers/ips)"},
	{Name: "force", Help: "Suppress console prompts"},
	{Name: "help", Help: "Print usage information."},
	{Name: "ip", HasArg: true, ArgName: "String", Help: "The IP address."},
	{Name: "ip-defaults", Help: "The config defaults for all IPs."},
	{Name: "topic", HasArg: true, ArgName: "String", Help: "The topic's name."},
	{Name: "user", HasArg: true, ArgName: "String", Help: "The user's principal name."},
	{Name: "user-defaults", Help: "The config defaults for all users."},
	{Name: "version", Help: "Display Kafka version."},
	{Name: "zk-tls-config-file", HasArg: true, ArgName: "ZooKeeper TLS configuration", Help: "Identifies the file where ZooKeeper client TLS connectivity properties are defined."},
	{Name: "zookeeper", HasArg: true, ArgName: "urls", Help: "DEPRECATED. The connection string for the zookeeper connection in the form host:port. Multiple URLS can be given to allow fail-over. Replaced by --bootstrap-server, REQUIRED unless --bootstrap-server is given."},
}

// entityFlags and defaultFlags are the shorthand entity options, in
// Kafka's order.
var (
	entityFlags  = [][2]string{{"topic", typeTopics}, {"client", typeClients}, {"user", typeUsers}, {"broker", typeBrokers}, {"broker-logger", typeBrokerLoggers}, {"ip", typeIPs}}
	defaultFlags = [][2]string{{"client-defaults", typeClients}, {"user-defaults", typeUsers}, {"broker-defaults", typeBrokers}, {"ip-defaults", typeIPs}}
)

// argError is a mistake Kafka reports with its message alone on stderr
// (IllegalArgumentException, InvalidConfigurationException).
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// options is the validated command line.
type options struct {
	p           *admintool.Options
	alter       bool
	bootstrap   string
	zookeeper   string
	types       []string // entity types, as Kafka's entityTypes
	names       []string // entity names ("" = default), as Kafka's entityNames
	describeAll bool
	props       map[string]string // --command-config
	zkTLSConfig string            // --zk-tls-config-file ("" = none)
}

// parseOptions parses args and applies ConfigCommandOptions.checkArgs.
func parseOptions(args []string) (*options, string, error) {
	p, special, err := admintool.ParseCommandWith(specs, args, helpText,
		admintool.Rules{Abbreviations: true, SingleValued: true})
	if p == nil {
		return nil, special, err
	}
	o := &options{p: p, alter: p.Has("alter"), describeAll: p.Has("all")}
	o.bootstrap, _ = p.Lookup("bootstrap-server")
	o.zookeeper, _ = p.Lookup("zookeeper")

	if n := btoi(p.Has("alter")) + btoi(p.Has("describe")); n != 1 {
		return nil, "", admintool.Usagef("Command must include exactly one action: --describe, --alter")
	}
	if p.Has("describe") {
		for _, c := range []string{"alter", "add-config", "delete-config"} {
			if p.Has(c) {
				return nil, "", admintool.Usagef("Option \"[describe]\" can't be used with option \"[%s]\"", c)
			}
		}
	}
	o.types = slices.Clone(p.Values("entity-type"))
	for _, f := range append(slices.Clone(entityFlags), defaultFlags...) {
		if p.Has(f[0]) {
			o.types = append(o.types, f[1])
		}
	}
	o.names = entityNames(args, p)

	seen := map[string]bool{}
	var dups []string
	for _, t := range o.types {
		if seen[t] && !slices.Contains(dups, t) {
			dups = append(dups, t)
		}
		seen[t] = true
	}
	if len(dups) > 0 {
		return nil, "", argErrorf("Duplicate entity type(s) specified: %s", strings.Join(dups, ","))
	}
	allowed, connect := zkTypes, "--zookeeper"
	if p.Has("bootstrap-server") {
		allowed, connect = bootstrapTypes, "--bootstrap-server"
	}
	for _, t := range o.types {
		if !slices.Contains(allowed, t) {
			return nil, "", argErrorf("Invalid entity type %s, the entity type must be one of %s with the %s argument", t, strings.Join(allowed, ","), connect)
		}
	}
	if len(o.types) == 0 {
		return nil, "", argErrorf("At least one entity type must be specified")
	}
	if len(o.types) > 1 && !(len(o.types) == 2 && seen[typeUsers] && seen[typeClients]) {
		return nil, "", argErrorf("Only '%s' and '%s' entity types may be specified together", typeUsers, typeClients)
	}
	specific := false
	for _, f := range append(slices.Clone(entityFlags), defaultFlags...) {
		specific = specific || p.Has(f[0])
	}
	if (p.Has("entity-name") || p.Has("entity-type") || p.Has("entity-default")) && specific {
		return nil, "", argErrorf("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
	}
	hasName, hasDefault := false, false
	for _, n := range o.names {
		hasName = hasName || n != ""
		hasDefault = hasDefault || n == ""
	}
	switch {
	case !p.Has("bootstrap-server") && !p.Has("zookeeper"):
		return nil, "", argErrorf("One of the required --bootstrap-server or --zookeeper arguments must be specified")
	case p.Has("bootstrap-server") && p.Has("zookeeper"):
		return nil, "", argErrorf("Only one of --bootstrap-server or --zookeeper must be specified")
	}
	if p.Has("all") && p.Has("zookeeper") {
		return nil, "", argErrorf("--bootstrap-server must be specified for --all")
	}
	if hasName && (slices.Contains(o.types, typeBrokers) || slices.Contains(o.types, typeBrokerLoggers)) {
		for _, f := range []string{"entity-name", "broker", "broker-logger"} {
			if vs := p.Values(f); len(vs) > 0 {
				v := vs[0]
				if _, err := strconv.ParseInt(v, 10, 32); err != nil {
					return nil, "", argErrorf("The entity name for %s must be a valid integer broker id, but it is: %s", o.types[0], v)
				}
			}
		}
	}
	if hasName && slices.Contains(o.types, typeIPs) {
		for _, f := range []string{"entity-name", "ip"} {
			if vs := p.Values(f); len(vs) > 0 && !validIPEntity(vs[0]) {
				v := vs[0]
				return nil, "", argErrorf("The entity name for %s must be a valid IP or resolvable host, but it is: %s", o.types[0], v)
			}
		}
	}
	if p.Has("describe") && slices.Contains(o.types, typeBrokerLoggers) && !hasName {
		return nil, "", argErrorf("an entity name must be specified with --describe of %s", strings.Join(o.types, ","))
	}
	if o.alter {
		if slices.ContainsFunc(o.types, func(t string) bool {
			return t == typeUsers || t == typeClients || t == typeBrokers || t == typeIPs
		}) {
			if !hasName && !hasDefault {
				return nil, "", argErrorf("an entity-name or default entity must be specified with --alter of users, clients, brokers or ips")
			}
		} else if !hasName {
			return nil, "", argErrorf("an entity name must be specified with --alter of %s", strings.Join(o.types, ","))
		}
		add, file, del := p.Has("add-config"), p.Has("add-config-file"), p.Has("delete-config")
		if add && file {
			return nil, "", argErrorf("Only one of --add-config or --add-config-file must be specified")
		}
		if !add && !file && !del {
			return nil, "", argErrorf("At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter")
		}
	}

	o.zkTLSConfig = p.Value("zk-tls-config-file")
	if f, ok := p.Lookup("command-config"); ok && p.Has("bootstrap-server") {
		props, err := admintool.LoadProperties(f)
		if err != nil {
			return nil, "", err
		}
		o.props = props
	}
	return o, "", nil
}

// validIPEntity is DynamicConfig.Ip.isValidIpEntity: <default>, an IP
// address or a host name that resolves.
func validIPEntity(s string) bool {
	if s == zkpaths.ConfigEntityDefault || net.ParseIP(s) != nil {
		return true
	}
	addrs, err := net.LookupHost(s)
	return err == nil && len(addrs) > 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// entityNames is Kafka's entityNames: the --entity-name values and an
// empty name for each --entity-default, in command-line order, then the
// shorthand flags' values and "" for each *-defaults flag.
func entityNames(args []string, p *admintool.Options) []string {
	var out []string
	names := p.Values("entity-name")
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, _, hasVal := strings.Cut(a[2:], "=")
		switch resolve(name) {
		case "entity-name":
			if len(names) > 0 {
				out = append(out, names[0])
				names = names[1:]
			}
			if !hasVal {
				i++
			}
		case "entity-default":
			out = append(out, "")
		default:
			if s := specFor(resolve(name)); s != nil && s.HasArg && !hasVal {
				i++
			}
		}
	}
	for _, f := range entityFlags {
		if v, ok := p.Lookup(f[0]); ok {
			out = append(out, v)
		}
	}
	for _, f := range defaultFlags {
		if p.Has(f[0]) {
			out = append(out, "")
		}
	}
	return out
}

// resolve maps an option as typed (possibly a unique prefix) to its name;
// parsing has already rejected unknown and ambiguous ones.
func resolve(name string) string {
	var match string
	for _, s := range specs {
		if s.Name == name {
			return name
		}
		if strings.HasPrefix(s.Name, name) {
			if match != "" {
				return ""
			}
			match = s.Name
		}
	}
	return match
}

func specFor(name string) *admintool.Spec {
	for i := range specs {
		if specs[i].Name == name {
			return &specs[i]
		}
	}
	return nil
}

// outsideBrackets reports, for each byte of s, whether it lies outside
// [...] groups the way Kafka's lookahead (?=[^\]]*(?:\[|$)) decides it:
// the next bracket after it is an opening one, or there is none.
func outsideBrackets(s string) []bool {
	out := make([]bool, len(s))
	next := byte(0)
	for i := len(s) - 1; i >= 0; i-- {
		out[i] = next != ']'
		if s[i] == '[' || s[i] == ']' {
			next = s[i]
		}
	}
	return out
}

// splitOutside splits s at every sep byte outside brackets, keeping
// trailing empty pieces (Java's split with limit -1) when keepEmpty.
func splitOutside(s string, sep byte) []string {
	out := outsideBrackets(s)
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == sep && out[i] {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// configsToBeAdded is Kafka's parseConfigsToBeAdded: the --add-config-file
// properties, or --add-config split at commas outside brackets into
// key=value pairs (one '=' outside brackets each), brackets removed from
// values, both sides trimmed. Later pairs win.
func configsToBeAdded(p *admintool.Options, out io.Writer) (map[string]string, error) {
	props := map[string]string{}
	if f, ok := p.Lookup("add-config-file"); ok {
		fp, err := admintool.LoadProperties(f)
		if err != nil {
			return nil, err
		}
		for k, v := range fp {
			props[k] = v
		}
	}
	if v, ok := p.Lookup("add-config"); ok {
		var pairs [][2]string
		for _, item := range splitOutside(v, ',') {
			kv := splitOutside(item, '=')
			if len(kv) != 2 {
				return nil, argErrorf(`requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".`)
			}
			// Java's split trims whitespace around '=' through the regex.
			pairs = append(pairs, [2]string{strings.TrimSpace(kv[0]), strings.TrimSpace(strings.NewReplacer("[", "", "]", "").Replace(kv[1]))})
		}
		for _, kv := range pairs {
			props[kv[0]] = kv[1]
		}
	}
	if v, ok := props["message.format.version"]; ok {
		fmt.Fprintf(out, "WARNING: The configuration message.format.version=%s is specified. This configuration will be ignored if the version is newer than the inter.broker.protocol.version specified in the broker.\n", v)
	}
	return props, nil
}

// configsToBeDeleted is parseConfigsToBeDeleted: every --delete-config
// value split at commas, trimmed.
func configsToBeDeleted(p *admintool.Options) []string {
	var out []string
	for _, v := range p.Values("delete-config") {
		for _, k := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(k))
		}
	}
	return out
}

// usageText renders the option list like joptsimple's help formatter.
func usageText() string { return admintool.Usage(specs) }
