package clitools

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/zkpaths"
)

// ParseKeyValues reads the values of a repeatable "--property k=v" style
// option, as Kafka's CommandLineUtils.parseKeyValueArgs does: the first '='
// splits key from value, the value may contain further '=' signs, and a
// pair without '=' is rejected. Later pairs win.
func ParseKeyValues(pairs []string) (map[string]string, error) {
	props := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("Invalid command line properties: %s", p)
		}
		props[k] = v
	}
	return props, nil
}

// Merge returns a copy of base overlaid with each of overs in turn.
func Merge(base map[string]string, overs ...map[string]string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for _, o := range overs {
		maps.Copy(out, o)
	}
	return out
}

// ErrBadBoolean is returned by Bool for values other than true/false.
var ErrBadBoolean = errors.New("clitools: not a boolean")

// Bool reads a Java-style boolean property (case-insensitive true/false);
// missing keys yield def.
func Bool(props map[string]string, key string, def bool) (bool, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%w: %s=%s", ErrBadBoolean, key, v)
}

// Millis reads a millisecond property; missing keys yield def.
func Millis(props map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := props[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Invalid value %s for configuration %s", v, key)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Unescape interprets the escapes Kafka's console tools accept in separator
// properties (key.separator=\t, line.separator=\n): \t \n \r \\ .
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\r`, "\r", `\\`, `\`)
	return r.Replace(s)
}

// BrokerBootstrap turns the registrations under /brokers/ids into a
// bootstrap list, preferring the PLAINTEXT listener, sorted by broker id:
// the classic ZooKeeper tools find the brokers this way instead of taking
// --bootstrap-server.
func BrokerBootstrap(brokers []zkpaths.BrokerInfo) []string {
	sorted := slices.Clone(brokers)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var out []string
	for _, b := range sorted {
		if len(b.Endpoints) == 0 {
			continue
		}
		ep := b.Endpoints[0]
		for _, e := range b.Endpoints {
			if e.SecurityProtocol == "PLAINTEXT" {
				ep = e
				break
			}
		}
		host := ep.Host
		if host == "" {
			host = "localhost"
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(int(ep.Port))))
	}
	return out
}
