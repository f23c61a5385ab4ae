package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/common"
)

// Endpoint is one entry of listeners or advertised.listeners (Kafka's
// EndPoint): NAME://host:port. Host "" means every interface.
type Endpoint struct {
	ListenerName     string // upper-cased, as Kafka normalises it
	Host             string
	Port             int32
	SecurityProtocol string
}

// Address is host:port for net.Listen or a client (IPv6 hosts bracketed).
func (e Endpoint) Address() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// String renders the endpoint as Kafka writes it in /brokers/ids/<id>:
// "NAME://host:port", with ":port" alone when the host is empty.
func (e Endpoint) String() string {
	if e.Host == "" {
		return fmt.Sprintf("%s://:%d", e.ListenerName, e.Port)
	}
	return e.ListenerName + "://" + e.Address()
}

// endpointRE follows Kafka's EndPoint pattern: name://host:port, where an IPv6
// host may be bracketed and the host may be empty.
var endpointRE = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

// ParseSecurityProtocolMap parses listener.security.protocol.map
// ("NAME:PROTOCOL,..."); names are upper-cased and protocols must be Kafka's.
func ParseSecurityProtocolMap(s string) (map[string]string, error) {
	out := make(map[string]string)
	for _, item := range SplitList(s) {
		name, proto, ok := strings.Cut(item, ":")
		name, proto = strings.TrimSpace(name), strings.TrimSpace(proto)
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("invalid entry %q, expected LISTENER_NAME:SECURITY_PROTOCOL", item)
		}
		p := strings.ToUpper(proto)
		if !common.IsSecurityProtocol(p) {
			return nil, fmt.Errorf("unknown security protocol %q for listener %s (valid: %s)", proto, strings.ToUpper(name), strings.Join(common.SecurityProtocols, ", "))
		}
		name = strings.ToUpper(name)
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("listener %s is mapped twice", name)
		}
		out[name] = p
	}
	return out, nil
}

// ParseEndpoints parses a comma-separated listener list with the given
// security protocol map. distinctPorts demands different non-zero ports, as
// Kafka does for listeners (not for advertised.listeners).
func ParseEndpoints(s string, protocols map[string]string, distinctPorts bool) ([]Endpoint, error) {
	var eps []Endpoint
	var problems []string
	for _, item := range SplitList(s) {
		m := endpointRE.FindStringSubmatch(item)
		if m == nil {
			problems = append(problems, fmt.Sprintf("unable to parse %q as NAME://host:port", item))
			continue
		}
		name := strings.ToUpper(m[1])
		if name == "" {
			problems = append(problems, fmt.Sprintf("listener %q has an empty name", item))
			continue
		}
		port, err := strconv.ParseInt(m[3], 10, 32)
		if err != nil || port < 0 || port > 65535 {
			problems = append(problems, fmt.Sprintf("listener %q has invalid port %s (0..65535)", item, m[3]))
			continue
		}
		proto, ok := protocols[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("no security protocol defined for listener %s (add it to listener.security.protocol.map)", name))
			continue
		}
		eps = append(eps, Endpoint{ListenerName: name, Host: m[2], Port: int32(port), SecurityProtocol: proto})
	}
	names := map[string]bool{}
	ports := map[int32]bool{}
	for _, e := range eps {
		if names[e.ListenerName] {
			problems = append(problems, fmt.Sprintf("each listener must have a different name, %s appears twice", e.ListenerName))
		}
		names[e.ListenerName] = true
		if distinctPorts && e.Port != 0 {
			if ports[e.Port] {
				problems = append(problems, fmt.Sprintf("each listener must have a different port, %d appears twice", e.Port))
			}
			ports[e.Port] = true
		}
	}
	if len(problems) > 0 {
		return eps, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return eps, nil
}

// SplitList splits a Kafka LIST value (or a tool's --bootstrap-server list)
// on commas, trimming blanks and dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
