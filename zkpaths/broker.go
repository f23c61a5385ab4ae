package zkpaths

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/common"
)

// EndPoint is one advertised listener (kafka.cluster.EndPoint).
type EndPoint struct {
	ListenerName     string // upper case, e.g. "PLAINTEXT", "INTERNAL"
	Host             string // "" means unspecified
	Port             int32
	SecurityProtocol string
}

// ConnectionString is the registration form "<LISTENER>://<host>:<port>",
// with IPv6 hosts in brackets.
func (e EndPoint) ConnectionString() string {
	if e.Host == "" {
		return e.ListenerName + "://:" + strconv.Itoa(int(e.Port))
	}
	return e.ListenerName + "://" + net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// ParseEndPoint parses "<LISTENER>://<host>:<port>"; the security protocol
// is looked up in protocolMap, or, when the map is nil, the listener name
// must itself be a protocol name (registration versions 2 and 3).
func ParseEndPoint(s string, protocolMap map[string]string) (EndPoint, error) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return EndPoint{}, fmt.Errorf("zkpaths: bad endpoint %q", s)
	}
	listener, hostport := strings.ToUpper(s[:i]), s[i+3:]
	j := strings.LastIndexByte(hostport, ':')
	if j < 0 {
		return EndPoint{}, fmt.Errorf("zkpaths: bad endpoint %q: no port", s)
	}
	host := hostport[:j]
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	port, err := strconv.ParseInt(hostport[j+1:], 10, 32)
	if err != nil {
		return EndPoint{}, fmt.Errorf("zkpaths: bad endpoint %q: %w", s, err)
	}
	ep := EndPoint{ListenerName: listener, Host: host, Port: int32(port)}
	if protocolMap != nil {
		p, ok := protocolMap[listener]
		if !ok {
			return EndPoint{}, fmt.Errorf("zkpaths: endpoint %q: listener not in listener_security_protocol_map", s)
		}
		ep.SecurityProtocol = p
	} else {
		if !common.IsSecurityProtocol(listener) {
			return EndPoint{}, fmt.Errorf("zkpaths: endpoint %q: unknown security protocol", s)
		}
		ep.SecurityProtocol = listener
	}
	return ep, nil
}

// FeatureRange is a supported feature version range in a registration.
type FeatureRange struct {
	MinVersion int16
	MaxVersion int16
}

// BrokerInfoVersion is the registration version written with IBP >= 2.7-IV0.
const BrokerInfoVersion = 5

// BrokerInfo is a broker registration (BrokerIdZNode / BrokerInfo).
type BrokerInfo struct {
	ID        int32 // from the znode name, not part of the JSON
	Version   int   // 1..5; Encode writes 4 or 5 field sets
	Endpoints []EndPoint
	Rack      string // "" = no rack (the field is then omitted)
	JMXPort   int32  // -1 when JMX is off
	Timestamp int64  // registration time, epoch ms
	Features  map[string]FeatureRange
	// Epoch is the broker epoch: the czxid of the registration znode. Filled
	// by readers of ZooKeeper, never encoded.
	Epoch int64
}

// Encode writes the registration JSON with the key order of Kafka 3.x
// (Scala 2.13) builds, e.g.
// {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"],"jmx_port":-1,"port":9092,"host":"h","version":5,"timestamp":"1700000000123"}.
// host/port are those of the first PLAINTEXT endpoint (null/-1 if none).
func (b BrokerInfo) Encode() []byte {
	v := b.Version
	if v == 0 {
		v = BrokerInfoVersion
	}
	o := newObj()
	if v >= 5 {
		f := newObj()
		names := slices.Sorted(maps.Keys(b.Features))
		for _, n := range names {
			r := b.Features[n]
			f.raw(n, newObj().int("min_version", int64(r.MinVersion)).int("max_version", int64(r.MaxVersion)).bytes())
		}
		o.raw("features", f.bytes())
	}
	if v >= 4 {
		m := newObj()
		seen := map[string]bool{}
		for _, e := range b.Endpoints {
			if seen[e.ListenerName] {
				continue
			}
			seen[e.ListenerName] = true
			m.str(e.ListenerName, e.SecurityProtocol)
		}
		o.raw("listener_security_protocol_map", m.bytes())
	}
	if v >= 2 {
		eps := make([]string, len(b.Endpoints))
		for i, e := range b.Endpoints {
			eps[i] = e.ConnectionString()
		}
		o.raw("endpoints", appendStrings(nil, eps))
	}
	if v >= 3 && b.Rack != "" {
		o.str("rack", b.Rack)
	}
	o.int("jmx_port", int64(b.JMXPort))
	host, port := "", int32(-1)
	found := false
	for _, e := range b.Endpoints {
		if e.SecurityProtocol == common.ProtocolPlaintext {
			host, port, found = e.Host, e.Port, true
			break
		}
	}
	o.int("port", int64(port))
	if found {
		o.str("host", host)
	} else {
		o.null("host")
	}
	o.int("version", int64(v))
	o.str("timestamp", strconv.FormatInt(b.Timestamp, 10))
	return o.bytes()
}

// DecodeBrokerInfo reads a registration of broker id, accepting versions
// 1..5 and ignoring unknown fields.
func DecodeBrokerInfo(id int32, data []byte) (BrokerInfo, error) {
	var v struct {
		Version   *int                       `json:"version"`
		JMXPort   *int32                     `json:"jmx_port"`
		Host      *string                    `json:"host"`
		Port      *int32                     `json:"port"`
		Timestamp flexInt64                  `json:"timestamp"`
		Endpoints []string                   `json:"endpoints"`
		Rack      *string                    `json:"rack"`
		LSPM      map[string]string          `json:"listener_security_protocol_map"`
		Features  map[string]json.RawMessage `json:"features"`
	}
	if err := unmarshal("broker registration", data, &v); err != nil {
		return BrokerInfo{}, err
	}
	if v.Version == nil {
		return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: missing version", id)
	}
	if v.JMXPort == nil {
		return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: missing jmx_port", id)
	}
	b := BrokerInfo{ID: id, Version: *v.Version, JMXPort: *v.JMXPort, Timestamp: v.Timestamp.V}
	if b.Version < 1 {
		return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: unsupported version %d", id, b.Version)
	}
	if b.Version == 1 {
		if v.Host == nil || v.Port == nil {
			return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: v1 without host/port", id)
		}
		b.Endpoints = []EndPoint{{ListenerName: common.ProtocolPlaintext, Host: *v.Host, Port: *v.Port, SecurityProtocol: common.ProtocolPlaintext}}
	} else {
		var pm map[string]string
		if v.LSPM != nil {
			pm = make(map[string]string, len(v.LSPM))
			for k, p := range v.LSPM {
				pm[strings.ToUpper(k)] = p
			}
		}
		for _, s := range v.Endpoints {
			ep, err := ParseEndPoint(s, pm)
			if err != nil {
				return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: %w", id, err)
			}
			b.Endpoints = append(b.Endpoints, ep)
		}
	}
	if v.Rack != nil {
		b.Rack = *v.Rack
	}
	if len(v.Features) > 0 {
		b.Features = make(map[string]FeatureRange, len(v.Features))
		for name, raw := range v.Features {
			var r struct {
				Min *int16 `json:"min_version"`
				Max *int16 `json:"max_version"`
			}
			if err := json.Unmarshal(raw, &r); err != nil || r.Min == nil || r.Max == nil {
				return BrokerInfo{}, fmt.Errorf("zkpaths: broker %d: bad feature %q", id, name)
			}
			b.Features[name] = FeatureRange{MinVersion: *r.Min, MaxVersion: *r.Max}
		}
	}
	return b, nil
}

// EndPointFor returns the endpoint of the given listener.
func (b BrokerInfo) EndPointFor(listener string) (EndPoint, bool) {
	for _, e := range b.Endpoints {
		if strings.EqualFold(e.ListenerName, listener) {
			return e, true
		}
	}
	return EndPoint{}, false
}
