package quota

import (
	"fmt"
	"strings"

	"github.com/klassik/klassik/zkpaths"
)

// Part is the user or the client-id half of a quota entity.
type Part struct {
	// Set: the entity has this half at all (/config/users/<u> has no
	// client half, /config/clients/<c> no user half).
	Set bool
	// Default: the half is <default>.
	Default bool
	// Name is the sanitized user (as in the znode name, Kafka's
	// Sanitizer) or the client id as the client sends it; "" for a
	// <default> half.
	Name string
}

// Entity is one quota config entity, the node a quota is stored in
// (Kafka's KafkaQuotaEntity): user, client id, or both, each named or
// <default>.
type Entity struct {
	User, Client Part
}

// Named returns a half for a sanitized user or a client id.
func Named(name string) Part { return Part{Set: true, Name: name} }

// DefaultPart is the <default> half.
var DefaultPart = Part{Set: true, Default: true}

func (e Entity) String() string {
	var b strings.Builder
	if e.User.Set {
		if e.User.Default {
			b.WriteString("default user")
		} else {
			b.WriteString("user " + e.User.Name)
		}
	}
	if e.Client.Set {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if e.Client.Default {
			b.WriteString("default client-id")
		} else {
			b.WriteString("client-id " + e.Client.Name)
		}
	}
	return b.String()
}

// ZKPath is the entity's node below /config (users/<u>, clients/<c>,
// users/<u>/clients/<c>) with sanitized names, as Kafka writes them.
func (e Entity) ZKPath() (entityType, name string) {
	client := ""
	if e.Client.Set {
		client = zkpaths.ConfigEntityDefault
		if !e.Client.Default {
			client = zkpaths.Sanitize(e.Client.Name)
		}
	}
	if !e.User.Set {
		return zkpaths.ConfigTypeClient, client
	}
	user := zkpaths.ConfigEntityDefault
	if !e.User.Default {
		user = e.User.Name
	}
	if e.Client.Set {
		return zkpaths.ConfigTypeUser, user + "/" + zkpaths.ConfigTypeClient + "/" + client
	}
	return zkpaths.ConfigTypeUser, user
}

// EntityFromZK reads the entity of a node below /config: entityType
// "users" with name "<user>" or "<user>/clients/<client>", or "clients"
// with "<client>", names sanitized (as in a change notification).
func EntityFromZK(entityType, name string) (Entity, error) {
	clientPart := func(s string) (Part, error) {
		if s == zkpaths.ConfigEntityDefault {
			return DefaultPart, nil
		}
		c, err := zkpaths.Desanitize(s)
		if err != nil {
			return Part{}, err
		}
		return Named(c), nil
	}
	userPart := func(s string) Part {
		if s == zkpaths.ConfigEntityDefault {
			return DefaultPart
		}
		return Named(s)
	}
	switch entityType {
	case zkpaths.ConfigTypeClient:
		if name == "" || strings.Contains(name, "/") {
			return Entity{}, fmt.Errorf("quota: invalid client entity %q", name)
		}
		c, err := clientPart(name)
		return Entity{Client: c}, err
	case zkpaths.ConfigTypeUser:
		parts := strings.Split(name, "/")
		switch {
		case len(parts) == 1 && parts[0] != "":
			return Entity{User: userPart(parts[0])}, nil
		case len(parts) == 3 && parts[0] != "" && parts[1] == zkpaths.ConfigTypeClient && parts[2] != "":
			c, err := clientPart(parts[2])
			return Entity{User: userPart(parts[0]), Client: c}, err
		}
		return Entity{}, fmt.Errorf("quota: invalid quota entity path: %s", name)
	}
	return Entity{}, fmt.Errorf("quota: %q is not a client quota entity type", entityType)
}

// UserOf is the sanitized user of a principal ("User:alice" -> "alice"),
// the name quotas are looked up by (Kafka sanitizes KafkaPrincipal.getName).
func UserOf(principal string) string {
	if i := strings.IndexByte(principal, ':'); i >= 0 {
		principal = principal[i+1:]
	}
	return zkpaths.Sanitize(principal)
}
