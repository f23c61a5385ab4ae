package zkpaths

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// EncodeEntityConfig writes /config/<type>/<name>:
// {"version":1,"config":{"k":"v",...}}; keys in the order a JDK 9+ broker's
// java.util.Properties iterates (see javaPropertiesOrder), values as strings.
func EncodeEntityConfig(config map[string]string) []byte {
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	c := newObj()
	for _, k := range javaPropertiesOrder(keys) {
		c.str(k, config[k])
	}
	return newObj().int("version", 1).raw("config", c.bytes()).bytes()
}

// DecodeEntityConfig reads a config entity node. Null or empty data and a
// missing config object mean "no overrides". Non-string values are kept in
// their JSON text form.
func DecodeEntityConfig(data []byte) (map[string]string, error) {
	out := map[string]string{}
	if len(data) == 0 {
		return out, nil
	}
	var v struct {
		Config map[string]json.RawMessage `json:"config"`
	}
	if err := unmarshal("entity config", data, &v); err != nil {
		return nil, err
	}
	for k, raw := range v.Config {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			out[k] = s
			continue
		}
		out[k] = string(raw)
	}
	return out, nil
}

// EncodeConfigChangeNotification writes a version 2 change notification:
// {"version":2,"entity_path":"topics/orders"}.
func EncodeConfigChangeNotification(entityPath string) []byte {
	return newObj().int("version", 2).str("entity_path", entityPath).bytes()
}

// ConfigChange is a decoded change notification: which entity to re-read.
type ConfigChange struct {
	EntityType string // e.g. "topics", "users"
	EntityName string // sanitized; may be nested, e.g. "alice/clients/app-1"
}

// DecodeConfigChangeNotification reads version 1 ({"version":1,
// "entity_type":"topics","entity_name":"t"}, topics and clients only) and
// version 2 notifications.
func DecodeConfigChangeNotification(data []byte) (ConfigChange, error) {
	var v struct {
		Version    *int    `json:"version"`
		EntityPath *string `json:"entity_path"`
		EntityType *string `json:"entity_type"`
		EntityName *string `json:"entity_name"`
	}
	if err := unmarshal("config change", data, &v); err != nil {
		return ConfigChange{}, err
	}
	if v.Version == nil {
		return ConfigChange{}, fmt.Errorf("zkpaths: config change: missing version")
	}
	switch *v.Version {
	case 1:
		if v.EntityType == nil || v.EntityName == nil {
			return ConfigChange{}, fmt.Errorf("zkpaths: config change v1: missing entity_type or entity_name")
		}
		if *v.EntityType != ConfigTypeTopic && *v.EntityType != ConfigTypeClient {
			return ConfigChange{}, fmt.Errorf("zkpaths: config change v1: entity type %q", *v.EntityType)
		}
		return ConfigChange{EntityType: *v.EntityType, EntityName: *v.EntityName}, nil
	case 2:
		if v.EntityPath == nil {
			return ConfigChange{}, fmt.Errorf("zkpaths: config change v2: missing entity_path")
		}
		i := strings.IndexByte(*v.EntityPath, '/')
		if i <= 0 || i == len(*v.EntityPath)-1 {
			return ConfigChange{}, fmt.Errorf("zkpaths: config change v2: bad entity_path %q", *v.EntityPath)
		}
		return ConfigChange{EntityType: (*v.EntityPath)[:i], EntityName: (*v.EntityPath)[i+1:]}, nil
	default:
		return ConfigChange{}, fmt.Errorf("zkpaths: config change: unsupported version %d", *v.Version)
	}
}

// Sanitize encodes a user principal name or client id for use as a znode
// name (org.apache.kafka.common.utils.Sanitizer): URL-encoding as
// java.net.URLEncoder does, then '*' -> %2A and '+' -> %20.
func Sanitize(name string) string {
	const hex = "0123456789ABCDEF"
	if !needsSanitizing(name) {
		return name // the common case, per request for quotas: no copy
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
			b.WriteByte(c)
		default:
			// '*' and ' ' would be kept/turned into '+' by URLEncoder and are
			// then rewritten to %2A and %20, which equals plain escaping.
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		}
	}
	return b.String()
}

func needsSanitizing(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return true
		}
	}
	return false
}

// Desanitize reverses Sanitize.
func Desanitize(name string) (string, error) {
	s, err := url.QueryUnescape(name)
	if err != nil {
		return "", fmt.Errorf("zkpaths: desanitize %q: %w", name, err)
	}
	return s, nil
}
