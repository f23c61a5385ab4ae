package config

import (
	"strings"
	"testing"
)

// The authorizer keys: Kafka's two ACL authorizer class names are
// accepted; any other class is a start-up error naming the key and the
// value, never a warning that leaves the cluster open.
func TestAuthorizerKeys(t *testing.T) {
	d := mustFromMap(t, base())
	if d.AuthorizerClassName != "" || d.SuperUsers != "" || d.AllowEveryoneIfNoACLFound {
		t.Fatalf("defaults: %q %q %v", d.AuthorizerClassName, d.SuperUsers, d.AllowEveryoneIfNoACLFound)
	}
	for _, class := range []string{"kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"} {
		c := mustFromMap(t, with("authorizer.class.name", class, "super.users", "User:admin;User:ops", "allow.everyone.if.no.acl.found", "true"))
		if c.AuthorizerClassName != class || c.SuperUsers != "User:admin;User:ops" || !c.AllowEveryoneIfNoACLFound {
			t.Fatalf("%s: %+v", class, c)
		}
	}
	_, err := FromMap(with("authorizer.class.name", "com.example.Unknown"))
	if err == nil || !strings.Contains(err.Error(), "authorizer.class.name") || !strings.Contains(err.Error(), "com.example.Unknown") {
		t.Fatalf("unknown authorizer: %v", err)
	}
	_, err = FromMap(with("authorizer.class.name", "kafka.security.authorizer.AclAuthorizer", "super.users", "admin"))
	if err == nil || !strings.Contains(err.Error(), "super.users") || !strings.Contains(err.Error(), "principalType:principalName") {
		t.Fatalf("bad super user: %v", err)
	}
}
