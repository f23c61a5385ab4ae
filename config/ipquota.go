package config

// IP quotas (KIP-612): /config/ips/<ip> and /config/ips/<default> hold
// connection_creation_rate, Kafka's QuotaConfigs.ipConfigs. The broker
// applies them to its socket server (broker/ipquotas.go); the checks here
// are shared with the tools and APIs that write them (DynamicConfig.Ip).

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// IPConnectionRateKey is Kafka's QuotaConfigs.IP_CONNECTION_RATE_OVERRIDE_CONFIG.
const IPConnectionRateKey = "connection_creation_rate"

// IPConfigKeys are the keys an ips entity may hold.
var IPConfigKeys = []string{IPConnectionRateKey}

// IPEntityDefault is the znode name of the default IP entity.
const IPEntityDefault = "<default>"

// ResolveIPEntity returns the address an ips entity names: "<default>"
// gives ok with the zero Addr; an IP literal is itself; a host name is
// resolved (its first address), as Kafka's InetAddress.getByName.
func ResolveIPEntity(name string) (addr netip.Addr, err error) {
	if name == IPEntityDefault {
		return netip.Addr{}, nil
	}
	if a, err := netip.ParseAddr(name); err == nil {
		return a.Unmap(), nil
	}
	ips, err := net.LookupIP(name)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("%s is not a valid IP or resolvable host.", name)
	}
	a, _ := netip.AddrFromSlice(ips[0])
	return a.Unmap(), nil
}

// ValidateIPEntity is Kafka's DynamicConfig.Ip.isValidIpEntity with
// AdminZkClient's error text.
func ValidateIPEntity(name string) error {
	_, err := ResolveIPEntity(name)
	return err
}

// ValidateIPConfigs checks an ips entity's configs as Kafka's
// DynamicConfig.Ip.validate: only connection_creation_rate, an INT ≥ 0.
func ValidateIPConfigs(props map[string]string) error {
	var unknown []string
	for k := range props {
		if !slices.Contains(IPConfigKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("requirement failed: Unknown Dynamic Configuration: Set(%s).", strings.Join(unknown, ", "))
	}
	if v, ok := props[IPConnectionRateKey]; ok {
		if _, err := ParseIPConnectionRate(v); err != nil {
			return err
		}
	}
	return nil
}

// ParseIPConnectionRate reads a connection_creation_rate value.
func ParseIPConnectionRate(v string) (int, error) {
	v = strings.TrimSpace(v)
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		// Quota tools write doubles ("10.0"); Kafka parses the int.
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f < math.MinInt32 || f > math.MaxInt32 || f != math.Trunc(f) {
			return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, IPConnectionRateKey)
		}
		n = int64(f)
	}
	if n < 0 {
		return 0, fmt.Errorf("Invalid value %d for configuration %s: Value must be at least 0", n, IPConnectionRateKey)
	}
	return int(n), nil
}
