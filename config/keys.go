package config

import (
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/common"
)

// Type is a config's value type; the numbers are DescribeConfigs'
// config_type values (Kafka's ConfigDef.Type).
type Type int8

const (
	TypeBoolean  Type = 1
	TypeString   Type = 2
	TypeInt      Type = 3
	TypeShort    Type = 4
	TypeLong     Type = 5
	TypeDouble   Type = 6
	TypeList     Type = 7
	TypeClass    Type = 8
	TypePassword Type = 9
)

var typeNames = map[Type]string{TypeBoolean: "boolean", TypeString: "string", TypeInt: "int", TypeShort: "short", TypeLong: "long",
	TypeDouble: "double", TypeList: "list", TypeClass: "class", TypePassword: "password"}

func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "unknown"
}

// Key describes one broker config Klassik implements.
type Key struct {
	Name     string
	Type     Type
	Default  string // Kafka's default in text form; "" with Nullable means none
	Nullable bool   // Kafka defines no default; see the Config accessor for the fallback
	Group    string // section in server.properties.example
	Doc      string // one line

	field func(c *Config) any // pointer to the Config field
	check func(v any) string  // extra range/enum check on the parsed value; "" when fine
}

// BrokerKeys returns the table of implemented broker keys, in the order of
// server.properties.example. Callers must not modify it.
func BrokerKeys() []Key { return brokerKeys }

var brokerKeyIndex = func() map[string]int {
	m := make(map[string]int, len(brokerKeys))
	for i, k := range brokerKeys {
		if _, dup := m[k.Name]; dup {
			panic("config: duplicate key " + k.Name)
		}
		m[k.Name] = i
	}
	return m
}()

func lookupBrokerKey(name string) *Key {
	if i, ok := brokerKeyIndex[name]; ok {
		return &brokerKeys[i]
	}
	return lookupDynamicOnlyKey(name) // dynamic_keys.go
}

// set parses s with the key's type and stores it in c, then applies the
// key's check.
func (k *Key) set(c *Config, s string) error {
	s = strings.TrimSpace(s)
	var parsed any
	switch p := k.field(c).(type) {
	case *bool:
		b, err := parseBool(s)
		if err != nil {
			return err
		}
		*p, parsed = b, b
	case *int16:
		n, err := parseInt(s, 16)
		if err != nil {
			return err
		}
		*p, parsed = int16(n), n
	case *int32:
		n, err := parseInt(s, 32)
		if err != nil {
			return err
		}
		*p, parsed = int32(n), n
	case *int64:
		n, err := parseInt(s, 64)
		if err != nil {
			return err
		}
		*p, parsed = n, n
	case **int32:
		if s == "" && k.Nullable {
			*p = nil
			return nil
		}
		n, err := parseInt(s, 32)
		if err != nil {
			return err
		}
		v := int32(n)
		*p, parsed = &v, n
	case **int64:
		if s == "" && k.Nullable {
			*p = nil
			return nil
		}
		n, err := parseInt(s, 64)
		if err != nil {
			return err
		}
		*p, parsed = &n, n
	case *float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return fmt.Errorf("value %q is not a number", s)
		}
		*p, parsed = f, f
	case *string:
		*p, parsed = s, s
	case *[]string:
		l := SplitList(s)
		*p, parsed = l, l
	default:
		panic("config: unsupported field type for " + k.Name)
	}
	if k.check != nil {
		if msg := k.check(parsed); msg != "" {
			return fmt.Errorf("value %q %s", s, msg)
		}
	}
	return nil
}

// get renders the current value in Kafka's text form.
func (k *Key) get(c *Config) string {
	switch p := k.field(c).(type) {
	case *bool:
		return strconv.FormatBool(*p)
	case *int16:
		return strconv.FormatInt(int64(*p), 10)
	case *int32:
		return strconv.FormatInt(int64(*p), 10)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case **int32:
		if *p == nil {
			return ""
		}
		return strconv.FormatInt(int64(**p), 10)
	case **int64:
		if *p == nil {
			return ""
		}
		return strconv.FormatInt(**p, 10)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *string:
		return *p
	case *[]string:
		return strings.Join(*p, ",")
	}
	return ""
}

// parseBool accepts Kafka's spellings: true/false in any case.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("value %q is not a boolean (expected true or false)", s)
}

func parseInt(s string, bits int) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		kind := map[int]string{16: "short", 32: "int", 64: "long"}[bits]
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("value %q is out of range for a %s", s, kind)
		}
		return 0, fmt.Errorf("value %q is not a valid %s", s, kind)
	}
	return n, nil
}

// atLeast is Kafka's ConfigDef.Range.atLeast.
func atLeast(min float64) func(any) string {
	return func(v any) string {
		var f float64
		switch n := v.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return ""
		}
		if f < min {
			return fmt.Sprintf("must be at least %s", strconv.FormatFloat(min, 'g', -1, 64))
		}
		return ""
	}
}

// between is Kafka's ConfigDef.Range.between (inclusive).
func between(min, max float64) func(any) string {
	return func(v any) string {
		var f float64
		switch n := v.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return ""
		}
		if f < min || f > max {
			return fmt.Sprintf("must be between %s and %s", strconv.FormatFloat(min, 'g', -1, 64), strconv.FormatFloat(max, 'g', -1, 64))
		}
		return ""
	}
}

// oneOf is Kafka's ValidString.in / ValidList.in (case-sensitive, as Kafka).
// hostPort checks a host:port address (empty host = all interfaces, port 0
// = any free port).
func hostPort(v any) string {
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return "must be host:port"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "must be host:port with a port from 0 to 65535"
	}
	return ""
}

func oneOf(valid ...string) func(any) string {
	return func(v any) string {
		var items []string
		switch s := v.(type) {
		case string:
			items = []string{s}
		case []string:
			items = s
		}
		for _, it := range items {
			if !slices.Contains(valid, it) {
				return fmt.Sprintf("is not one of [%s]", strings.Join(valid, ", "))
			}
		}
		return ""
	}
}

// authorizerClass accepts the authorizers Klassik implements: Kafka 2.8's
// AclAuthorizer and the SimpleAclAuthorizer it replaced. Any other class
// would leave the cluster open, so it stops the broker.
func authorizerClass(v any) string {
	switch s, _ := v.(string); s {
	case "", "kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer":
		return ""
	}
	return "is not an authorizer Klassik implements (kafka.security.authorizer.AclAuthorizer or kafka.security.auth.SimpleAclAuthorizer)"
}

// principalList checks super.users: each entry (trimmed) is type:name,
// as AclAuthorizer.configure parses it.
func principalList(v any) string {
	s, _ := v.(string)
	if strings.TrimSpace(s) == "" {
		return ""
	}
	parts := strings.Split(s, ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" { // Java's split drops trailing empty strings
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		if !strings.Contains(strings.TrimSpace(p), ":") {
			return fmt.Sprintf("has %q, expected a string in format principalType:principalName", strings.TrimSpace(p))
		}
	}
	return ""
}

var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// Group names used by server.properties.example.
const (
	groupZooKeeper   = "ZooKeeper"
	groupGeneral     = "Broker identity and general"
	groupSocket      = "Socket server and listeners"
	groupLog         = "Log basics"
	groupRetention   = "Log retention, roll and flush"
	groupCleaner     = "Log cleaner (compaction)"
	groupReplication = "Replication and controller"
	groupGroup       = "Group coordinator and offsets"
	groupTxn         = "Transactions"
	groupMetrics     = "Metrics"
	groupSSL         = "TLS (SSL and SASL_SSL listeners; listener.name.<listener>.ssl.* overrides)"
	groupSASL        = "SASL"
	groupAuthorizer  = "Authorizer"

	groupPasswordEncoder = "Password encoder (dynamic password configs)"
	groupQuotas          = "Client quotas"
)

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// halfDouble ends the Doc of the thread-count keys (DynamicThreadPool).
const halfDouble = "; dynamic: a new value must be at least half and at most double the current one"

var brokerKeys = []Key{
	// ZooKeeper
	{Name: "zookeeper.connect", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "ZooKeeper connection string host:port[,host:port...][/chroot]; required",
		field: func(c *Config) any { return &c.ZookeeperConnect }},
	{Name: "zookeeper.session.timeout.ms", Type: TypeInt, Default: "18000", Group: groupZooKeeper,
		Doc:   "ZooKeeper session timeout; a broker silent this long loses its registration",
		field: func(c *Config) any { return &c.ZookeeperSessionTimeoutMs }, check: atLeast(1)},
	{Name: "zookeeper.connection.timeout.ms", Type: TypeInt, Nullable: true, Group: groupZooKeeper,
		Doc:   "how long to wait for the first ZooKeeper connection; defaults to the session timeout",
		field: func(c *Config) any { return &c.ZookeeperConnectionTimeoutMs }, check: atLeast(1)},
	{Name: "zookeeper.max.in.flight.requests", Type: TypeInt, Default: "10", Group: groupZooKeeper,
		Doc:   "maximum unacknowledged ZooKeeper requests before the client blocks",
		field: func(c *Config) any { return &c.ZookeeperMaxInFlightRequests }, check: atLeast(1)},

	// ZooKeeper security (zookeeper_security.go)
	{Name: "zookeeper.set.acl", Type: TypeBoolean, Default: "false", Group: groupZooKeeper,
		Doc:   "create znodes with secure ACLs: the broker's ZooKeeper identity owns them, others may only read (nothing on sensitive paths)",
		field: func(c *Config) any { return &c.ZookeeperSetACL }},
	{Name: "zookeeper.ssl.client.enable", Type: TypeBoolean, Default: "false", Group: groupZooKeeper,
		Doc:   "connect to ZooKeeper with TLS (its secureClientPort); needs zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		field: func(c *Config) any { return &c.ZookeeperSSLClientEnable }},
	{Name: "zookeeper.clientCnxnSocket", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "ZooKeeper client socket class; org.apache.zookeeper.ClientCnxnSocketNetty with TLS (Klassik's Go client behaves as either class)",
		field: func(c *Config) any { return &c.ZookeeperClientCnxnSocket }},
	{Name: "zookeeper.ssl.keystore.location", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "keystore with the client certificate for TLS to ZooKeeper; its subject DN is the x509 identity",
		field: func(c *Config) any { return &c.ZookeeperSSLKeystoreLocation }},
	{Name: "zookeeper.ssl.keystore.password", Type: TypePassword, Nullable: true, Group: groupZooKeeper,
		Doc:   "password of zookeeper.ssl.keystore.location",
		field: func(c *Config) any { return &c.ZookeeperSSLKeystorePassword }},
	{Name: "zookeeper.ssl.keystore.type", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "JKS, PKCS12 or PEM; unset: from the file name (.jks, .p12/.pfx, .pem) as ZooKeeper does",
		field: func(c *Config) any { return &c.ZookeeperSSLKeystoreType }},
	{Name: "zookeeper.ssl.truststore.location", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "truststore with the CA certificates that sign ZooKeeper's server certificate; unset: the system's roots",
		field: func(c *Config) any { return &c.ZookeeperSSLTruststoreLocation }},
	{Name: "zookeeper.ssl.truststore.password", Type: TypePassword, Nullable: true, Group: groupZooKeeper,
		Doc:   "password of zookeeper.ssl.truststore.location",
		field: func(c *Config) any { return &c.ZookeeperSSLTruststorePassword }},
	{Name: "zookeeper.ssl.truststore.type", Type: TypeString, Nullable: true, Group: groupZooKeeper,
		Doc:   "JKS, PKCS12 or PEM; unset: from the file name",
		field: func(c *Config) any { return &c.ZookeeperSSLTruststoreType }},
	{Name: "zookeeper.ssl.protocol", Type: TypeString, Default: "TLSv1.2", Group: groupZooKeeper,
		Doc:   "TLS protocol to ZooKeeper (TLSv1.2 or TLSv1.3); the only one enabled unless zookeeper.ssl.enabled.protocols is set",
		field: func(c *Config) any { return &c.ZookeeperSSLProtocol }},
	{Name: "zookeeper.ssl.enabled.protocols", Type: TypeList, Nullable: true, Group: groupZooKeeper,
		Doc:   "enabled TLS protocols to ZooKeeper (csv); unset: zookeeper.ssl.protocol",
		field: func(c *Config) any { return &c.ZookeeperSSLEnabledProtocols }},
	{Name: "zookeeper.ssl.cipher.suites", Type: TypeList, Nullable: true, Group: groupZooKeeper,
		Doc:   "enabled TLS 1.2 cipher suites to ZooKeeper by IANA name (csv); unset: Go's defaults",
		field: func(c *Config) any { return &c.ZookeeperSSLCipherSuites }},
	{Name: "zookeeper.ssl.endpoint.identification.algorithm", Type: TypeString, Default: "HTTPS", Group: groupZooKeeper,
		Doc:   "HTTPS (any case) checks ZooKeeper's certificate against the host name dialled; empty disables the check",
		field: func(c *Config) any { return &c.ZookeeperSSLEndpointIdentificationAlgorithm }},
	{Name: "zookeeper.ssl.crl.enable", Type: TypeBoolean, Default: "false", Group: groupZooKeeper,
		Doc:   "certificate revocation lists for ZooKeeper TLS; not implemented (true is a start-up error)",
		field: func(c *Config) any { return &c.ZookeeperSSLCrlEnable }},
	{Name: "zookeeper.ssl.ocsp.enable", Type: TypeBoolean, Default: "false", Group: groupZooKeeper,
		Doc:   "OCSP for ZooKeeper TLS; not implemented (true is a start-up error)",
		field: func(c *Config) any { return &c.ZookeeperSSLOcspEnable }},

	// General
	{Name: "broker.id", Type: TypeInt, Default: "-1", Group: groupGeneral,
		Doc:   "this broker's id; -1 lets ZooKeeper generate one above reserved.broker.max.id",
		field: func(c *Config) any { return &c.BrokerID }},
	{Name: "broker.id.generation.enable", Type: TypeBoolean, Default: "true", Group: groupGeneral,
		Doc:   "allow an id to be generated when broker.id is -1",
		field: func(c *Config) any { return &c.BrokerIDGenerationEnable }},
	{Name: "reserved.broker.max.id", Type: TypeInt, Default: "1000", Group: groupGeneral,
		Doc:   "highest id that may be configured by hand; generated ids start above it",
		field: func(c *Config) any { return &c.ReservedBrokerMaxID }, check: atLeast(0)},
	{Name: "broker.rack", Type: TypeString, Nullable: true, Group: groupGeneral,
		Doc:   "rack (or zone) of this broker; replica assignment spreads replicas over racks",
		field: func(c *Config) any { return &c.BrokerRack }},
	{Name: "message.max.bytes", Type: TypeInt, Default: "1048588", Group: groupGeneral,
		Doc:   "largest record batch the broker accepts (topic override: max.message.bytes)",
		field: func(c *Config) any { return &c.MessageMaxBytes }, check: atLeast(0)},
	{Name: "num.network.threads", Type: TypeInt, Default: "3", Group: groupGeneral,
		Doc:   "no pool in Klassik: each connection is served by its own goroutine, so the value changes nothing" + halfDouble,
		field: func(c *Config) any { return &c.NumNetworkThreads }, check: atLeast(1)},
	{Name: "num.io.threads", Type: TypeInt, Default: "8", Group: groupGeneral,
		Doc:   "no pool in Klassik: requests are handled on their connection's goroutine, so the value changes nothing" + halfDouble,
		field: func(c *Config) any { return &c.NumIOThreads }, check: atLeast(1)},
	{Name: "background.threads", Type: TypeInt, Default: "10", Group: groupGeneral,
		Doc:   "no pool in Klassik: each background task (retention, checkpoints, ISR checks) has its own goroutine, so the value changes nothing" + halfDouble,
		field: func(c *Config) any { return &c.BackgroundThreads }, check: atLeast(1)},
	{Name: "queued.max.requests", Type: TypeInt, Default: "500", Group: groupGeneral,
		Doc:   "no request queue in Klassik: a connection's goroutine reads its next request only after answering the previous one, so a connection holds at most one request (max.connections and socket.request.max.bytes bound them all) and the queue this bounds stays empty; the value changes nothing",
		field: func(c *Config) any { return &c.QueuedMaxRequests }, check: atLeast(1)},
	{Name: "request.timeout.ms", Type: TypeInt, Default: "30000", Group: groupGeneral,
		Doc:   "timeout of requests this broker sends to other brokers",
		field: func(c *Config) any { return &c.RequestTimeoutMs }, check: atLeast(0)},
	{Name: "auto.create.topics.enable", Type: TypeBoolean, Default: "true", Group: groupGeneral,
		Doc:   "create a topic when a client asks for metadata of an unknown one",
		field: func(c *Config) any { return &c.AutoCreateTopicsEnable }},
	{Name: "delete.topic.enable", Type: TypeBoolean, Default: "true", Group: groupGeneral,
		Doc:   "allow topics to be deleted; when false deletion requests are refused",
		field: func(c *Config) any { return &c.DeleteTopicEnable }},

	// Socket server
	{Name: "listeners", Type: TypeString, Default: "PLAINTEXT://:9092", Group: groupSocket,
		Doc:   "comma-separated NAME://host:port to bind; empty host = all interfaces, port 0 = any free port",
		field: func(c *Config) any { return &c.Listeners }},
	{Name: "advertised.listeners", Type: TypeString, Nullable: true, Group: groupSocket,
		Doc:   "addresses published in ZooKeeper for clients and brokers; defaults to listeners",
		field: func(c *Config) any { return &c.AdvertisedListeners }},
	{Name: "listener.security.protocol.map", Type: TypeString, Default: "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", Group: groupSocket,
		Doc:   "security protocol of each listener name",
		field: func(c *Config) any { return &c.ListenerSecurityProtocolMap }},
	{Name: "inter.broker.listener.name", Type: TypeString, Nullable: true, Group: groupSocket,
		Doc:   "listener used between brokers and by the controller; exclusive with security.inter.broker.protocol",
		field: func(c *Config) any { return &c.InterBrokerListenerName }},
	{Name: "security.inter.broker.protocol", Type: TypeString, Default: "PLAINTEXT", Group: groupSocket,
		Doc:   "security protocol between brokers, naming the listener of the same name",
		field: func(c *Config) any { return &c.SecurityInterBrokerProtocol }, check: oneOf(common.SecurityProtocols...)},
	{Name: "socket.send.buffer.bytes", Type: TypeInt, Default: "102400", Group: groupSocket,
		Doc:   "SO_SNDBUF of client connections; -1 keeps the OS default",
		field: func(c *Config) any { return &c.SocketSendBufferBytes }, check: atLeast(-1)},
	{Name: "socket.receive.buffer.bytes", Type: TypeInt, Default: "102400", Group: groupSocket,
		Doc:   "SO_RCVBUF of client connections; -1 keeps the OS default",
		field: func(c *Config) any { return &c.SocketReceiveBufferBytes }, check: atLeast(-1)},
	{Name: "socket.request.max.bytes", Type: TypeInt, Default: "104857600", Group: groupSocket,
		Doc:   "largest request frame accepted; larger ones close the connection",
		field: func(c *Config) any { return &c.SocketRequestMaxBytes }, check: atLeast(1)},
	{Name: "max.connections.per.ip", Type: TypeInt, Default: i64(math.MaxInt32), Group: groupSocket,
		Doc:   "connections allowed from one IP address; a new connection beyond it is closed at once (0 needs max.connections.per.ip.overrides); dynamic",
		field: func(c *Config) any { return &c.MaxConnectionsPerIP }, check: atLeast(0)},
	{Name: "max.connections.per.ip.overrides", Type: TypeString, Default: "", Group: groupSocket,
		Doc:   "per-IP or host name exceptions to max.connections.per.ip, e.g. \"hostName:100,127.0.0.1:200\"; dynamic",
		field: func(c *Config) any { return &c.MaxConnectionsPerIPOverrides }, check: ipOverridesCheck},
	{Name: "max.connections", Type: TypeInt, Default: i64(math.MaxInt32), Group: groupSocket,
		Doc: "connections allowed in total (listener.name.<listener>.max.connections per listener); the acceptor waits for a free slot; " +
			"the inter-broker listener may exceed the broker-wide limit, and the least recently used connection of another listener is closed then; dynamic",
		field: func(c *Config) any { return &c.MaxConnections }, check: atLeast(0)},
	{Name: "max.connection.creation.rate", Type: TypeInt, Default: i64(math.MaxInt32), Group: groupSocket,
		Doc: "new connections per second accepted broker-wide (listener.name.<listener>.max.connection.creation.rate per listener; " +
			"the inter-broker listener is exempt from the broker-wide rate); the acceptor delays connections over it; dynamic",
		field: func(c *Config) any { return &c.MaxConnectionCreationRate }, check: atLeast(0)},
	{Name: "port", Type: TypeInt, Default: "9092", Group: groupSocket,
		Doc:   "deprecated: port of the PLAINTEXT listener, used only when listeners is unset",
		field: func(c *Config) any { return &c.Port }, check: between(0, 65535)},
	{Name: "host.name", Type: TypeString, Default: "", Group: groupSocket,
		Doc:   "deprecated: host of the PLAINTEXT listener, used only when listeners is unset",
		field: func(c *Config) any { return &c.HostName }},
	{Name: "advertised.host.name", Type: TypeString, Nullable: true, Group: groupSocket,
		Doc:   "deprecated: advertised host, used only when advertised.listeners is unset (defaults to host.name)",
		field: func(c *Config) any { return &c.AdvertisedHostName }},
	{Name: "advertised.port", Type: TypeInt, Nullable: true, Group: groupSocket,
		Doc:   "deprecated: advertised port, used only when advertised.listeners is unset (defaults to port)",
		field: func(c *Config) any { return &c.AdvertisedPort }, check: between(0, 65535)},
	{Name: "connections.max.idle.ms", Type: TypeLong, Default: "600000", Group: groupSocket,
		Doc:   "idle connections are closed after this long",
		field: func(c *Config) any { return &c.ConnectionsMaxIdleMs }},

	// TLS
	{Name: "ssl.protocol", Type: TypeString, Default: "TLSv1.3", Group: groupSSL,
		Doc:   "TLS protocol family (TLSv1.3, TLSv1.2, TLS); the versions in use are ssl.enabled.protocols",
		field: func(c *Config) any { return &c.SSLProtocol }, check: sslCheck("ssl.protocol")},
	{Name: "ssl.enabled.protocols", Type: TypeList, Default: "TLSv1.2,TLSv1.3", Group: groupSSL,
		Doc:   "TLS versions enabled on listeners and inter-broker connections",
		field: func(c *Config) any { return &c.SSLEnabledProtocols }, check: sslCheck("ssl.enabled.protocols")},
	{Name: "ssl.cipher.suites", Type: TypeList, Default: "", Group: groupSSL,
		Doc:   "TLS 1.2 cipher suites by their Java (IANA) names; empty = Go's defaults; a suite Go lacks stops start-up",
		field: func(c *Config) any { return &c.SSLCipherSuites }, check: sslCheck("ssl.cipher.suites")},
	{Name: "ssl.keystore.type", Type: TypeString, Default: "JKS", Group: groupSSL,
		Doc:   "key store format: JKS, PKCS12 or PEM",
		field: func(c *Config) any { return &c.SSLKeystoreType }, check: sslCheck("ssl.keystore.type")},
	{Name: "ssl.keystore.location", Type: TypeString, Nullable: true, Group: groupSSL,
		Doc:   "key store file with the broker's private key and certificate chain",
		field: func(c *Config) any { return &c.SSLKeystoreLocation }},
	{Name: "ssl.keystore.password", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "password of the JKS or PKCS12 key store file",
		field: func(c *Config) any { return &c.SSLKeystorePassword }},
	{Name: "ssl.key.password", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "password of the private key (JKS: defaults to the store password; PEM: the encrypted PKCS#8 key's)",
		field: func(c *Config) any { return &c.SSLKeyPassword }},
	{Name: "ssl.keystore.key", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "PKCS#8 private key in PEM, inline (ssl.keystore.type=PEM)",
		field: func(c *Config) any { return &c.SSLKeystoreKey }},
	{Name: "ssl.keystore.certificate.chain", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "certificate chain in PEM, inline (ssl.keystore.type=PEM)",
		field: func(c *Config) any { return &c.SSLKeystoreCertificateChain }},
	{Name: "ssl.truststore.type", Type: TypeString, Default: "JKS", Group: groupSSL,
		Doc:   "trust store format: JKS, PKCS12 or PEM",
		field: func(c *Config) any { return &c.SSLTruststoreType }, check: sslCheck("ssl.truststore.type")},
	{Name: "ssl.truststore.location", Type: TypeString, Nullable: true, Group: groupSSL,
		Doc:   "trust store file with the CAs that sign client and broker certificates; unset = the system roots",
		field: func(c *Config) any { return &c.SSLTruststoreLocation }},
	{Name: "ssl.truststore.password", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "password of the trust store file (JKS and PKCS12)",
		field: func(c *Config) any { return &c.SSLTruststorePassword }},
	{Name: "ssl.truststore.certificates", Type: TypePassword, Nullable: true, Group: groupSSL,
		Doc:   "trusted certificates in PEM, inline (ssl.truststore.type=PEM)",
		field: func(c *Config) any { return &c.SSLTruststoreCertificates }},
	{Name: "ssl.client.auth", Type: TypeString, Default: "none", Group: groupSSL,
		Doc:   "client certificates on SSL listeners: none, requested or required",
		field: func(c *Config) any { return &c.SSLClientAuth }, check: sslCheck("ssl.client.auth")},
	{Name: "ssl.endpoint.identification.algorithm", Type: TypeString, Default: "https", Group: groupSSL,
		Doc:   "https checks the host name of brokers this broker connects to; empty turns the check off",
		field: func(c *Config) any { return &c.SSLEndpointIdentification }, check: sslCheck("ssl.endpoint.identification.algorithm")},
	{Name: "ssl.principal.mapping.rules", Type: TypeString, Default: "DEFAULT", Group: groupSSL,
		Doc:   "rules mapping a client certificate's DN to a principal name (DEFAULT, RULE:pattern/replacement/[LU], ...)",
		field: func(c *Config) any { return &c.SSLPrincipalMappingRules }, check: sslCheck("ssl.principal.mapping.rules")},
	{Name: "ssl.keymanager.algorithm", Type: TypeString, Default: "SunX509", Group: groupSSL,
		Doc:   "Java key manager; only Kafka's default is accepted",
		field: func(c *Config) any { return &c.SSLKeymanagerAlgorithm }, check: sslCheck("ssl.keymanager.algorithm")},
	{Name: "ssl.trustmanager.algorithm", Type: TypeString, Default: "PKIX", Group: groupSSL,
		Doc:   "Java trust manager; only Kafka's default is accepted",
		field: func(c *Config) any { return &c.SSLTrustmanagerAlgorithm }, check: sslCheck("ssl.trustmanager.algorithm")},
	{Name: "ssl.provider", Type: TypeString, Nullable: true, Group: groupSSL,
		Doc:   "Java security provider; must stay unset",
		field: func(c *Config) any { return &c.SSLProvider }, check: sslCheck("ssl.provider")},
	{Name: "ssl.engine.factory.class", Type: TypeClass, Nullable: true, Group: groupSSL,
		Doc:   "custom Java SslEngineFactory; must stay unset",
		field: func(c *Config) any { return &c.SSLEngineFactoryClass }, check: sslCheck("ssl.engine.factory.class")},
	{Name: "ssl.secure.random.implementation", Type: TypeString, Nullable: true, Group: groupSSL,
		Doc:   "Java SecureRandom; must stay unset (Go uses crypto/rand)",
		field: func(c *Config) any { return &c.SSLSecureRandomImplementation }, check: sslCheck("ssl.secure.random.implementation")},
	{Name: "security.providers", Type: TypeString, Nullable: true, Group: groupSSL,
		Doc:   "Java security provider creators; must stay unset",
		field: func(c *Config) any { return &c.SecurityProviders }, check: sslCheck("security.providers")},
	// Log basics
	{Name: "log.dirs", Type: TypeString, Nullable: true, Group: groupLog,
		Doc:   "comma-separated data directories; falls back to log.dir",
		field: func(c *Config) any { return &c.LogDirs }},
	{Name: "log.dir", Type: TypeString, Default: "/tmp/kafka-logs", Group: groupLog,
		Doc:   "single data directory, used when log.dirs is unset",
		field: func(c *Config) any { return &c.LogDir }},
	{Name: "num.partitions", Type: TypeInt, Default: "1", Group: groupLog,
		Doc:   "partitions of an auto-created topic or of a create request that gives none",
		field: func(c *Config) any { return &c.NumPartitions }, check: atLeast(1)},
	{Name: "default.replication.factor", Type: TypeInt, Default: "1", Group: groupLog,
		Doc:   "replication factor of an auto-created topic or of a create request that gives none",
		field: func(c *Config) any { return &c.DefaultReplicationFactor }, check: atLeast(1)},
	{Name: "min.insync.replicas", Type: TypeInt, Default: "1", Group: groupLog,
		Doc:   "replicas that must be in sync for an acks=all write to succeed (topic override of the same name)",
		field: func(c *Config) any { return &c.MinInsyncReplicas }, check: atLeast(1)},
	{Name: "num.recovery.threads.per.data.dir", Type: TypeInt, Default: "1", Group: groupLog,
		Doc:   "parallel log loading and recovery workers per data directory at start-up (shutdown closes every log in parallel)" + halfDouble + "; used at the next start",
		field: func(c *Config) any { return &c.NumRecoveryThreadsPerDataDir }, check: atLeast(1)},
	{Name: "log.segment.bytes", Type: TypeInt, Default: "1073741824", Group: groupLog,
		Doc:   "segment file size that triggers a roll (topic override: segment.bytes)",
		field: func(c *Config) any { return &c.LogSegmentBytes }, check: atLeast(14)},
	{Name: "log.index.size.max.bytes", Type: TypeInt, Default: "10485760", Group: groupLog,
		Doc:   "maximum size of an offset or time index file (topic override: segment.index.bytes)",
		field: func(c *Config) any { return &c.LogIndexSizeMaxBytes }, check: atLeast(4)},
	{Name: "log.index.interval.bytes", Type: TypeInt, Default: "4096", Group: groupLog,
		Doc:   "bytes appended between two index entries (topic override: index.interval.bytes)",
		field: func(c *Config) any { return &c.LogIndexIntervalBytes }, check: atLeast(0)},
	{Name: "log.preallocate", Type: TypeBoolean, Default: "false", Group: groupLog,
		Doc:   "preallocate segment files at roll (topic override: preallocate)",
		field: func(c *Config) any { return &c.LogPreallocate }},
	{Name: "log.message.format.version", Type: TypeString, Default: "2.8-IV1", Group: groupLog,
		Doc:   "record format written to disk; Klassik always writes v2 batches and accepts the value for compatibility",
		field: func(c *Config) any { return &c.LogMessageFormatVersion }},
	{Name: "log.message.timestamp.type", Type: TypeString, Default: "CreateTime", Group: groupLog,
		Doc:   "CreateTime keeps the producer's timestamp, LogAppendTime stamps the broker's clock",
		field: func(c *Config) any { return &c.LogMessageTimestampType }, check: oneOf("CreateTime", "LogAppendTime")},
	{Name: "log.message.timestamp.difference.max.ms", Type: TypeLong, Default: i64(unlimitedInt64), Group: groupLog,
		Doc:   "reject CreateTime records whose timestamp is further than this from the broker's clock",
		field: func(c *Config) any { return &c.LogMessageTimestampDifferenceMaxMs }, check: atLeast(0)},
	{Name: "log.message.downconversion.enable", Type: TypeBoolean, Default: "true", Group: groupLog,
		Doc:   "allow converting records for old fetch versions",
		field: func(c *Config) any { return &c.LogMessageDownconversionEnable }},
	{Name: "compression.type", Type: TypeString, Default: "producer", Group: groupLog,
		Doc:   "codec of stored batches: producer keeps the producer's, or uncompressed/gzip/snappy/lz4/zstd",
		field: func(c *Config) any { return &c.CompressionType }, check: oneOf(compressionTypes...)},

	// Retention, roll, flush
	{Name: "log.roll.ms", Type: TypeLong, Nullable: true, Group: groupRetention,
		Doc:   "roll a segment after this long even if not full; wins over log.roll.hours (topic override: segment.ms)",
		field: func(c *Config) any { return &c.LogRollMs }, check: atLeast(1)},
	{Name: "log.roll.hours", Type: TypeInt, Default: "168", Group: groupRetention,
		Doc:   "segment roll time in hours, used when log.roll.ms is unset",
		field: func(c *Config) any { return &c.LogRollHours }, check: atLeast(1)},
	{Name: "log.roll.jitter.ms", Type: TypeLong, Nullable: true, Group: groupRetention,
		Doc:   "random jitter subtracted from the roll time; wins over log.roll.jitter.hours (topic override: segment.jitter.ms)",
		field: func(c *Config) any { return &c.LogRollJitterMs }, check: atLeast(0)},
	{Name: "log.roll.jitter.hours", Type: TypeInt, Default: "0", Group: groupRetention,
		Doc:   "roll jitter in hours, used when log.roll.jitter.ms is unset",
		field: func(c *Config) any { return &c.LogRollJitterHours }, check: atLeast(0)},
	{Name: "log.retention.ms", Type: TypeLong, Nullable: true, Group: groupRetention,
		Doc:   "delete segments older than this; -1 keeps forever; wins over minutes and hours (topic override: retention.ms)",
		field: func(c *Config) any { return &c.LogRetentionMs }},
	{Name: "log.retention.minutes", Type: TypeInt, Nullable: true, Group: groupRetention,
		Doc:   "retention in minutes, used when log.retention.ms is unset",
		field: func(c *Config) any { return &c.LogRetentionMinutes }},
	{Name: "log.retention.hours", Type: TypeInt, Default: "168", Group: groupRetention,
		Doc:   "retention in hours, used when neither log.retention.ms nor minutes is set",
		field: func(c *Config) any { return &c.LogRetentionHours }},
	{Name: "log.retention.bytes", Type: TypeLong, Default: "-1", Group: groupRetention,
		Doc:   "delete old segments once a partition exceeds this size; -1 = no limit (topic override: retention.bytes)",
		field: func(c *Config) any { return &c.LogRetentionBytes }},
	{Name: "log.retention.check.interval.ms", Type: TypeLong, Default: "300000", Group: groupRetention,
		Doc:   "how often the retention task looks for deletable segments",
		field: func(c *Config) any { return &c.LogRetentionCheckIntervalMs }, check: atLeast(1)},
	{Name: "log.segment.delete.delay.ms", Type: TypeLong, Default: "60000", Group: groupRetention,
		Doc:   "wait between marking a segment .deleted and removing its files (topic override: file.delete.delay.ms)",
		field: func(c *Config) any { return &c.LogSegmentDeleteDelayMs }, check: atLeast(0)},
	{Name: "log.flush.interval.messages", Type: TypeLong, Default: i64(unlimitedInt64), Group: groupRetention,
		Doc:   "fsync a partition after this many messages; durability normally comes from replication (topic override: flush.messages)",
		field: func(c *Config) any { return &c.LogFlushIntervalMessages }, check: atLeast(1)},
	{Name: "log.flush.interval.ms", Type: TypeLong, Nullable: true, Group: groupRetention,
		Doc:   "fsync a partition when its oldest unflushed data is this old; defaults to log.flush.scheduler.interval.ms (topic override: flush.ms)",
		field: func(c *Config) any { return &c.LogFlushIntervalMs }, check: atLeast(0)},
	{Name: "log.flush.scheduler.interval.ms", Type: TypeLong, Default: i64(unlimitedInt64), Group: groupRetention,
		Doc:   "how often the flusher checks log.flush.interval.ms",
		field: func(c *Config) any { return &c.LogFlushSchedulerIntervalMs }},
	{Name: "log.flush.offset.checkpoint.interval.ms", Type: TypeInt, Default: "60000", Group: groupRetention,
		Doc:   "how often recovery-point-offset-checkpoint is written",
		field: func(c *Config) any { return &c.LogFlushOffsetCheckpointIntervalMs }, check: atLeast(0)},
	{Name: "log.flush.start.offset.checkpoint.interval.ms", Type: TypeInt, Default: "60000", Group: groupRetention,
		Doc:   "how often log-start-offset-checkpoint is written",
		field: func(c *Config) any { return &c.LogFlushStartOffsetCheckpointIntervalMs }, check: atLeast(0)},

	// Cleaner
	{Name: "log.cleanup.policy", Type: TypeList, Default: "delete", Group: groupCleaner,
		Doc:   "delete (time/size retention), compact (keep the latest value per key), or both (topic override: cleanup.policy)",
		field: func(c *Config) any { return &c.LogCleanupPolicy }, check: oneOf("compact", "delete")},
	{Name: "log.cleaner.enable", Type: TypeBoolean, Default: "true", Group: groupCleaner,
		Doc:   "run the log cleaner; needed by compacted topics such as __consumer_offsets",
		field: func(c *Config) any { return &c.LogCleanerEnable }},
	{Name: "log.cleaner.threads", Type: TypeInt, Default: "1", Group: groupCleaner,
		Doc:   "Kafka's cleaner threads; Klassik runs one cleaner goroutine and gives each pass log.cleaner.dedupe.buffer.size / log.cleaner.threads of offset map, the share of one Kafka thread; dynamic (restarts the cleaner; within half and double of the current value)",
		field: func(c *Config) any { return &c.LogCleanerThreads }, check: atLeast(0)},
	{Name: "log.cleaner.dedupe.buffer.size", Type: TypeLong, Default: "134217728", Group: groupCleaner,
		Doc:   "memory for the key-to-offset map, divided among log.cleaner.threads; dynamic (restarts the cleaner)",
		field: func(c *Config) any { return &c.LogCleanerDedupeBufferSize }},
	{Name: "log.cleaner.io.buffer.size", Type: TypeInt, Default: "524288", Group: groupCleaner,
		Doc:   "initial read buffer of a cleaner pass (grown to the largest batch); dynamic (restarts the cleaner)",
		field: func(c *Config) any { return &c.LogCleanerIOBufferSize }, check: atLeast(0)},
	{Name: "log.cleaner.io.buffer.load.factor", Type: TypeDouble, Default: "0.9", Group: groupCleaner,
		Doc:   "fill ratio of the dedupe map; dynamic (restarts the cleaner)",
		field: func(c *Config) any { return &c.LogCleanerIOBufferLoadFactor }},
	{Name: "log.cleaner.io.max.bytes.per.second", Type: TypeDouble, Default: strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64), Group: groupCleaner,
		Doc:   "bytes per second the cleaner reads at most (Kafka's cleaner-io throttler, checked every 300 ms); dynamic (restarts the cleaner)",
		field: func(c *Config) any { return &c.LogCleanerIOMaxBytesPerSecond }},
	{Name: "log.cleaner.backoff.ms", Type: TypeLong, Default: "15000", Group: groupCleaner,
		Doc:   "sleep when no log needs cleaning; dynamic (restarts the cleaner)",
		field: func(c *Config) any { return &c.LogCleanerBackoffMs }, check: atLeast(0)},
	{Name: "log.cleaner.min.cleanable.ratio", Type: TypeDouble, Default: "0.5", Group: groupCleaner,
		Doc:   "dirty/total ratio above which a log is cleaned (topic override: min.cleanable.dirty.ratio)",
		field: func(c *Config) any { return &c.LogCleanerMinCleanableRatio }, check: between(0, 1)},
	{Name: "log.cleaner.delete.retention.ms", Type: TypeLong, Default: "86400000", Group: groupCleaner,
		Doc:   "how long tombstones survive cleaning (topic override: delete.retention.ms)",
		field: func(c *Config) any { return &c.LogCleanerDeleteRetentionMs }, check: atLeast(0)},
	{Name: "log.cleaner.min.compaction.lag.ms", Type: TypeLong, Default: "0", Group: groupCleaner,
		Doc:   "records younger than this are never compacted (topic override: min.compaction.lag.ms)",
		field: func(c *Config) any { return &c.LogCleanerMinCompactionLagMs }, check: atLeast(0)},
	{Name: "log.cleaner.max.compaction.lag.ms", Type: TypeLong, Default: i64(unlimitedInt64), Group: groupCleaner,
		Doc:   "records older than this are compacted even below the dirty ratio (topic override: max.compaction.lag.ms)",
		field: func(c *Config) any { return &c.LogCleanerMaxCompactionLagMs }, check: atLeast(1)},

	// Replication and controller
	{Name: "controller.socket.timeout.ms", Type: TypeInt, Default: "30000", Group: groupReplication,
		Doc:   "timeout of the controller's connections to brokers",
		field: func(c *Config) any { return &c.ControllerSocketTimeoutMs }},
	{Name: "replica.lag.time.max.ms", Type: TypeLong, Default: "30000", Group: groupReplication,
		Doc:   "a follower that has not caught up for this long is removed from the ISR",
		field: func(c *Config) any { return &c.ReplicaLagTimeMaxMs }},
	{Name: "replica.socket.timeout.ms", Type: TypeInt, Default: "30000", Group: groupReplication,
		Doc:   "timeout of follower fetch connections; at least replica.fetch.wait.max.ms",
		field: func(c *Config) any { return &c.ReplicaSocketTimeoutMs }},
	{Name: "replica.socket.receive.buffer.bytes", Type: TypeInt, Default: "65536", Group: groupReplication,
		Doc:   "SO_RCVBUF of follower fetch connections",
		field: func(c *Config) any { return &c.ReplicaSocketReceiveBufferBytes }},
	{Name: "replica.fetch.max.bytes", Type: TypeInt, Default: "1048576", Group: groupReplication,
		Doc:   "bytes a follower asks for per partition (soft: one batch is always returned)",
		field: func(c *Config) any { return &c.ReplicaFetchMaxBytes }, check: atLeast(0)},
	{Name: "replica.fetch.wait.max.ms", Type: TypeInt, Default: "500", Group: groupReplication,
		Doc:   "longest a follower fetch waits on the leader for data",
		field: func(c *Config) any { return &c.ReplicaFetchWaitMaxMs }},
	{Name: "replica.fetch.min.bytes", Type: TypeInt, Default: "1", Group: groupReplication,
		Doc:   "bytes a follower fetch waits for before the leader answers",
		field: func(c *Config) any { return &c.ReplicaFetchMinBytes }},
	{Name: "replica.fetch.response.max.bytes", Type: TypeInt, Default: "10485760", Group: groupReplication,
		Doc:   "bytes per follower fetch response (soft)",
		field: func(c *Config) any { return &c.ReplicaFetchResponseMaxBytes }, check: atLeast(0)},
	{Name: "replica.fetch.backoff.ms", Type: TypeInt, Default: "1000", Group: groupReplication,
		Doc:   "pause after a failed follower fetch",
		field: func(c *Config) any { return &c.ReplicaFetchBackoffMs }, check: atLeast(0)},
	{Name: "num.replica.fetchers", Type: TypeInt, Default: "1", Group: groupReplication,
		Doc:   "fetcher goroutines per source broker; dynamic: the partitions are re-assigned to the new fetchers with their fetch state (within half and double of the current value)",
		field: func(c *Config) any { return &c.NumReplicaFetchers }, check: atLeast(1)},
	{Name: "replica.high.watermark.checkpoint.interval.ms", Type: TypeLong, Default: "5000", Group: groupReplication,
		Doc:   "how often replication-offset-checkpoint is written",
		field: func(c *Config) any { return &c.ReplicaHighWatermarkCheckpointIntervalMs }},
	{Name: "replication.quota.window.num", Type: TypeInt, Default: "11", Group: groupReplication,
		Doc:   "samples (windows) the replication throttle rate is measured over",
		field: func(c *Config) any { return &c.NumReplicationQuotaSamples }, check: atLeast(1)},
	{Name: "replication.quota.window.size.seconds", Type: TypeInt, Default: "1", Group: groupReplication,
		Doc:   "length of one replication throttle sample",
		field: func(c *Config) any { return &c.ReplicationQuotaWindowSizeSeconds }, check: atLeast(1)},
	{Name: "fetch.purgatory.purge.interval.requests", Type: TypeInt, Default: "1000", Group: groupReplication,
		Doc:   "purge completed delayed fetches after this many new ones",
		field: func(c *Config) any { return &c.FetchPurgatoryPurgeIntervalRequests }},
	{Name: "producer.purgatory.purge.interval.requests", Type: TypeInt, Default: "1000", Group: groupReplication,
		Doc:   "purge completed delayed produces after this many new ones",
		field: func(c *Config) any { return &c.ProducerPurgatoryPurgeIntervalRequests }},
	{Name: "delete.records.purgatory.purge.interval.requests", Type: TypeInt, Default: "1", Group: groupReplication,
		Doc:   "purge completed delayed DeleteRecords after this many new ones",
		field: func(c *Config) any { return &c.DeleteRecordsPurgatoryPurgeIntervalRequests }},
	{Name: "unclean.leader.election.enable", Type: TypeBoolean, Default: "false", Group: groupReplication,
		Doc:   "allow an out-of-sync replica to become leader when no ISR member is alive (may lose data)",
		field: func(c *Config) any { return &c.UncleanLeaderElectionEnable }},
	{Name: "auto.leader.rebalance.enable", Type: TypeBoolean, Default: "true", Group: groupReplication,
		Doc:   "the controller moves leadership back to preferred replicas",
		field: func(c *Config) any { return &c.AutoLeaderRebalanceEnable }},
	{Name: "leader.imbalance.per.broker.percentage", Type: TypeInt, Default: "10", Group: groupReplication,
		Doc:   "share of non-preferred leaders on a broker that triggers a rebalance",
		field: func(c *Config) any { return &c.LeaderImbalancePerBrokerPercentage }},
	{Name: "leader.imbalance.check.interval.seconds", Type: TypeLong, Default: "300", Group: groupReplication,
		Doc:   "how often the controller checks leader imbalance",
		field: func(c *Config) any { return &c.LeaderImbalanceCheckIntervalSeconds }},
	{Name: "controlled.shutdown.enable", Type: TypeBoolean, Default: "true", Group: groupReplication,
		Doc:   "on SIGTERM, ask the controller to move leadership away before stopping",
		field: func(c *Config) any { return &c.ControlledShutdownEnable }},
	{Name: "controlled.shutdown.max.retries", Type: TypeInt, Default: "3", Group: groupReplication,
		Doc:   "controlled shutdown attempts before stopping anyway",
		field: func(c *Config) any { return &c.ControlledShutdownMaxRetries }},
	{Name: "controlled.shutdown.retry.backoff.ms", Type: TypeLong, Default: "5000", Group: groupReplication,
		Doc:   "pause between controlled shutdown attempts",
		field: func(c *Config) any { return &c.ControlledShutdownRetryBackoffMs }},
	{Name: "inter.broker.protocol.version", Type: TypeString, Default: "2.8-IV1", Group: groupReplication,
		Doc:   "protocol level between brokers: below 0.11.0-IV2 followers truncate to their high watermark (no OffsetForLeaderEpoch), below 2.7-IV1 their fetches carry no last fetched epoch; request versions and znode formats stay Klassik's at every level",
		field: func(c *Config) any { return &c.InterBrokerProtocolVersion }},
	{Name: "max.incremental.fetch.session.cache.slots", Type: TypeInt, Default: "1000", Group: groupReplication,
		Doc:   "incremental fetch sessions kept by the broker",
		field: func(c *Config) any { return &c.MaxIncrementalFetchSessionCacheSlots }, check: atLeast(0)},
	{Name: "fetch.max.bytes", Type: TypeInt, Default: "57671680", Group: groupReplication,
		Doc:   "upper bound of a fetch response to consumers",
		field: func(c *Config) any { return &c.FetchMaxBytes }, check: atLeast(1024)},

	// Groups and offsets
	{Name: "group.min.session.timeout.ms", Type: TypeInt, Default: "6000", Group: groupGroup,
		Doc:   "smallest session timeout a consumer may ask for",
		field: func(c *Config) any { return &c.GroupMinSessionTimeoutMs }},
	{Name: "group.max.session.timeout.ms", Type: TypeInt, Default: "1800000", Group: groupGroup,
		Doc:   "largest session timeout a consumer may ask for",
		field: func(c *Config) any { return &c.GroupMaxSessionTimeoutMs }},
	{Name: "group.initial.rebalance.delay.ms", Type: TypeInt, Default: "3000", Group: groupGroup,
		Doc:   "wait for more members before the first rebalance of an empty group",
		field: func(c *Config) any { return &c.GroupInitialRebalanceDelayMs }},
	{Name: "group.max.size", Type: TypeInt, Default: i64(math.MaxInt32), Group: groupGroup,
		Doc:   "members allowed in one group",
		field: func(c *Config) any { return &c.GroupMaxSize }, check: atLeast(1)},
	{Name: "offset.metadata.max.bytes", Type: TypeInt, Default: "4096", Group: groupGroup,
		Doc:   "largest metadata string stored with a committed offset",
		field: func(c *Config) any { return &c.OffsetMetadataMaxBytes }},
	{Name: "offsets.load.buffer.size", Type: TypeInt, Default: "5242880", Group: groupGroup,
		Doc:   "read size when loading __consumer_offsets",
		field: func(c *Config) any { return &c.OffsetsLoadBufferSize }, check: atLeast(1)},
	{Name: "offsets.topic.replication.factor", Type: TypeShort, Default: "3", Group: groupGroup,
		Doc:   "replication factor of __consumer_offsets; creation waits until this many brokers are up",
		field: func(c *Config) any { return &c.OffsetsTopicReplicationFactor }, check: atLeast(1)},
	{Name: "offsets.topic.num.partitions", Type: TypeInt, Default: "50", Group: groupGroup,
		Doc:   "partitions of __consumer_offsets (do not change after creation)",
		field: func(c *Config) any { return &c.OffsetsTopicNumPartitions }, check: atLeast(1)},
	{Name: "offsets.topic.segment.bytes", Type: TypeInt, Default: "104857600", Group: groupGroup,
		Doc:   "segment size of __consumer_offsets",
		field: func(c *Config) any { return &c.OffsetsTopicSegmentBytes }, check: atLeast(1)},
	{Name: "offsets.topic.compression.codec", Type: TypeInt, Default: "0", Group: groupGroup,
		Doc:   "codec id for offset commits: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd",
		field: func(c *Config) any { return &c.OffsetsTopicCompressionCodec }, check: between(0, 4)},
	{Name: "offsets.retention.minutes", Type: TypeInt, Default: "10080", Group: groupGroup,
		Doc:   "committed offsets of an empty group expire after this long",
		field: func(c *Config) any { return &c.OffsetsRetentionMinutes }, check: atLeast(1)},
	{Name: "offsets.retention.check.interval.ms", Type: TypeLong, Default: "600000", Group: groupGroup,
		Doc:   "how often expired offsets are removed",
		field: func(c *Config) any { return &c.OffsetsRetentionCheckIntervalMs }, check: atLeast(1)},
	{Name: "offsets.commit.timeout.ms", Type: TypeInt, Default: "5000", Group: groupGroup,
		Doc:   "how long an offset commit waits for replication of __consumer_offsets",
		field: func(c *Config) any { return &c.OffsetsCommitTimeoutMs }, check: atLeast(1)},
	{Name: "offsets.commit.required.acks", Type: TypeShort, Default: "-1", Group: groupGroup,
		Doc:   "acks for offset commit writes; keep -1",
		field: func(c *Config) any { return &c.OffsetsCommitRequiredAcks }},

	// Transactions
	{Name: "transactional.id.expiration.ms", Type: TypeInt, Default: "604800000", Group: groupTxn,
		Doc:   "a transactional id unused for this long is forgotten",
		field: func(c *Config) any { return &c.TransactionalIDExpirationMs }, check: atLeast(1)},
	{Name: "transaction.max.timeout.ms", Type: TypeInt, Default: "900000", Group: groupTxn,
		Doc:   "largest transaction timeout a producer may ask for",
		field: func(c *Config) any { return &c.TransactionMaxTimeoutMs }, check: atLeast(1)},
	{Name: "transaction.state.log.min.isr", Type: TypeInt, Default: "2", Group: groupTxn,
		Doc:   "min.insync.replicas of __transaction_state",
		field: func(c *Config) any { return &c.TransactionStateLogMinISR }, check: atLeast(1)},
	{Name: "transaction.state.log.load.buffer.size", Type: TypeInt, Default: "5242880", Group: groupTxn,
		Doc:   "read size when loading __transaction_state",
		field: func(c *Config) any { return &c.TransactionStateLogLoadBufferSize }, check: atLeast(1)},
	{Name: "transaction.state.log.replication.factor", Type: TypeShort, Default: "3", Group: groupTxn,
		Doc:   "replication factor of __transaction_state",
		field: func(c *Config) any { return &c.TransactionStateLogReplicationFactor }, check: atLeast(1)},
	{Name: "transaction.state.log.num.partitions", Type: TypeInt, Default: "50", Group: groupTxn,
		Doc:   "partitions of __transaction_state",
		field: func(c *Config) any { return &c.TransactionStateLogNumPartitions }, check: atLeast(1)},
	{Name: "transaction.state.log.segment.bytes", Type: TypeInt, Default: "104857600", Group: groupTxn,
		Doc:   "segment size of __transaction_state",
		field: func(c *Config) any { return &c.TransactionStateLogSegmentBytes }, check: atLeast(1)},
	{Name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", Type: TypeInt, Default: "10000", Group: groupTxn,
		Doc:   "how often timed-out transactions are aborted",
		field: func(c *Config) any { return &c.TransactionAbortTimedOutTransactionCleanupIntervalMs }, check: atLeast(1)},
	{Name: "transaction.remove.expired.transaction.cleanup.interval.ms", Type: TypeInt, Default: "3600000", Group: groupTxn,
		Doc:   "how often expired transactional ids are removed",
		field: func(c *Config) any { return &c.TransactionRemoveExpiredTransactionCleanupIntervalMs }, check: atLeast(1)},
	{Name: "producer.id.expiration.ms", Type: TypeInt, Default: "86400000", Group: groupTxn,
		Doc:   "idempotent producer state is dropped after this long without writes",
		field: func(c *Config) any { return &c.ProducerIDExpirationMs }, check: atLeast(1)},

	// Client quotas
	{Name: "quota.producer.default", Type: TypeLong, Default: "9223372036854775807", Group: groupQuotas,
		Doc:   "deprecated: producer byte rate of every client id without a dynamic quota (use /config/clients/<default>)",
		field: func(c *Config) any { return &c.QuotaProducerDefault }, check: atLeast(1)},
	{Name: "quota.consumer.default", Type: TypeLong, Default: "9223372036854775807", Group: groupQuotas,
		Doc:   "deprecated: consumer byte rate of every client id without a dynamic quota (use /config/clients/<default>)",
		field: func(c *Config) any { return &c.QuotaConsumerDefault }, check: atLeast(1)},
	{Name: "quota.window.num", Type: TypeInt, Default: "11", Group: groupQuotas,
		Doc:   "samples kept for the produce, fetch and request quota rates",
		field: func(c *Config) any { return &c.QuotaWindowNum }, check: atLeast(1)},
	{Name: "quota.window.size.seconds", Type: TypeInt, Default: "1", Group: groupQuotas,
		Doc:   "time span of each produce, fetch and request quota sample",
		field: func(c *Config) any { return &c.QuotaWindowSizeSeconds }, check: atLeast(1)},
	{Name: "controller.quota.window.num", Type: TypeInt, Default: "11", Group: groupQuotas,
		Doc:   "samples of the controller mutation quota (its burst is num × size × rate)",
		field: func(c *Config) any { return &c.ControllerQuotaWindowNum }, check: atLeast(1)},
	{Name: "controller.quota.window.size.seconds", Type: TypeInt, Default: "1", Group: groupQuotas,
		Doc:   "time span of each controller mutation quota sample",
		field: func(c *Config) any { return &c.ControllerQuotaWindowSizeSeconds }, check: atLeast(1)},

	// Metrics
	{Name: "metric.reporters", Type: TypeList, Default: "", Group: groupMetrics,
		Doc:   "Java reporter classes; recorded for compatibility, Klassik exposes go-metrics instead",
		field: func(c *Config) any { return &c.MetricReporters }},
	{Name: "klassik.http.listener", Type: TypeString, Nullable: true, Group: groupMetrics,
		Doc:   "host:port of the broker's read-only HTTP listener (/metrics in Prometheus format, the console); empty = off",
		field: func(c *Config) any { return &c.HTTPListener }, check: hostPort},
	{Name: "klassik.http.auth", Type: TypeString, Nullable: true, Group: groupMetrics,
		Doc:   "basic: the console and /api/v1 need HTTP basic credentials of a SASL/PLAIN or SCRAM user (/metrics stays open); empty = open",
		field: func(c *Config) any { return &c.HTTPAuth }, check: oneOf("", "basic")},
	{Name: "klassik.http.pprof.enable", Type: TypeBoolean, Default: "false", Group: groupMetrics,
		Doc:   "serve Go's profiles (/debug/pprof/, as net/http/pprof) on klassik.http.listener, for bin/klassik-bench.sh --profile; off by default, they are not for an open network",
		field: func(c *Config) any { return &c.HTTPPprof }},

	// SASL
	{Name: "sasl.enabled.mechanisms", Type: TypeList, Default: "GSSAPI", Group: groupSASL,
		Doc:   "SASL mechanisms of the SASL listeners (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); listener.name.<listener>.sasl.enabled.mechanisms overrides it per listener",
		field: func(c *Config) any { return &c.SaslEnabledMechanisms }},
	{Name: "sasl.mechanism.inter.broker.protocol", Type: TypeString, Default: "GSSAPI", Group: groupSASL,
		Doc:   "SASL mechanism the broker logs in with on a SASL inter-broker listener (its JAAS username and password)",
		field: func(c *Config) any { return &c.SaslMechanismInterBrokerProtocol }},
	{Name: "sasl.jaas.config", Type: TypePassword, Nullable: true, Group: groupSASL,
		Doc:   "JAAS login module line used when no listener.name.<listener>.<mechanism>.sasl.jaas.config is set (before the KafkaServer section of the JAAS file)",
		field: func(c *Config) any { return &c.SaslJaasConfig }},
	{Name: "connections.max.reauth.ms", Type: TypeLong, Default: "0", Group: groupSASL,
		Doc:   "KIP-368 session lifetime of SASL connections: they must re-authenticate within it or are closed at their next request; 0 = unlimited",
		field: func(c *Config) any { return &c.ConnectionsMaxReauthMs }, check: atLeast(0)},
	{Name: "sasl.server.max.receive.size", Type: TypeInt, Default: "524288", Group: groupSASL,
		Doc:   "largest frame a SASL connection may send before it authenticated; larger ones close it",
		field: func(c *Config) any { return &c.SaslServerMaxReceiveSize }, check: atLeast(1)},
	{Name: "connection.failed.authentication.delay.ms", Type: TypeInt, Default: "100", Group: groupSASL,
		Doc:   "a connection whose SASL authentication failed is closed this long after the failure is answered",
		field: func(c *Config) any { return &c.ConnectionFailedAuthDelayMs }, check: atLeast(0)},

	// Authorizer
	{Name: "authorizer.class.name", Type: TypeString, Default: "", Group: groupAuthorizer,
		Doc:   "ACL authorizer: kafka.security.authorizer.AclAuthorizer (or the older kafka.security.auth.SimpleAclAuthorizer), ACLs in ZooKeeper under /kafka-acl; empty = every request allowed",
		field: func(c *Config) any { return &c.AuthorizerClassName }, check: authorizerClass},
	{Name: "super.users", Type: TypeString, Default: "", Group: groupAuthorizer,
		Doc:   "principals (User:name) separated by semicolons that the authorizer allows everything",
		field: func(c *Config) any { return &c.SuperUsers }, check: principalList},
	{Name: "allow.everyone.if.no.acl.found", Type: TypeBoolean, Default: "false", Group: groupAuthorizer,
		Doc:   "let every principal act on a resource that has no ACL at all",
		field: func(c *Config) any { return &c.AllowEveryoneIfNoACLFound }},

	// Password encoder of dynamic broker configs (passwordencoder.go)
	{Name: "password.encoder.secret", Type: TypePassword, Nullable: true, Group: groupPasswordEncoder,
		Doc:   "secret that encodes the password configs stored in /config/brokers/<id>; without it a dynamic password config is refused",
		field: func(c *Config) any { return &c.PasswordEncoderSecret }},
	{Name: "password.encoder.old.secret", Type: TypePassword, Nullable: true, Group: groupPasswordEncoder,
		Doc:   "previous password.encoder.secret: stored passwords encoded with it are re-encoded with the new secret at start-up",
		field: func(c *Config) any { return &c.PasswordEncoderOldSecret }},
	{Name: "password.encoder.keyfactory.algorithm", Type: TypeString, Nullable: true, Group: groupPasswordEncoder,
		Doc:   "key derivation: PBKDF2WithHmacSHA512 (unset), PBKDF2WithHmacSHA256 or PBKDF2WithHmacSHA1",
		field: func(c *Config) any { return &c.PasswordEncoderKeyFactoryAlgorithm }, check: oneOfOrEmpty(passwordKeyFactories...)},
	{Name: "password.encoder.cipher.algorithm", Type: TypeString, Default: "AES/CBC/PKCS5Padding", Group: groupPasswordEncoder,
		Doc:   "cipher of encoded passwords: AES/CBC/PKCS5Padding or AES/GCM/NoPadding",
		field: func(c *Config) any { return &c.PasswordEncoderCipherAlgorithm }, check: oneOf(passwordCiphers...)},
	{Name: "password.encoder.key.length", Type: TypeInt, Default: "128", Group: groupPasswordEncoder,
		Doc:   "key length in bits of the password cipher (128, 192 or 256 for AES)",
		field: func(c *Config) any { return &c.PasswordEncoderKeyLength }, check: aesKeyLength},
	{Name: "password.encoder.iterations", Type: TypeInt, Default: "4096", Group: groupPasswordEncoder,
		Doc:   "PBKDF2 iteration count of the password encoder",
		field: func(c *Config) any { return &c.PasswordEncoderIterations }, check: atLeast(1024)},
}
