package zkpaths

import (
	"bytes"
	"maps"
	"testing"
)

var goldenUserConfig = UserConfig{
	Scram: map[string]string{
		"SCRAM-SHA-256": "salt=MWMzeGJ2cHVrM20yeDV2c2JiYzhqcW15cWs=,stored_key=kpyK0MPYyeJ3mnlpD6JcU1600vWBEyBxa4UFum6yR+I=,server_key=t7xwbY+ePMwl4vJAWJtTD9m31LdjDLWZcKY/v4u3oYs=,iterations=8192",
		"SCRAM-SHA-512": "salt=NW5yaXZxcmRzM2QyemhtOWRoNndubW56dw==,stored_key=pcWvA4Bf9/sCY2CkyiTHCNTIOLN8RA46IldT40ct3W5OMBKxDACFKHI3bhdY+RYdlS+2KZ8+10XBXwI6/paD6w==,server_key=EBFq/cE/LLd8DoXLkHdBd6yqGUt6dhZfzOUvGlIgIp1GtIes+oiMhuJyMNCFjgABs4udQlN7qxfI2H+HJibH6A==,iterations=4096",
	},
	Other: map[string]string{"producer_byte_rate": "1048576"},
}

func TestUserConfigGolden(t *testing.T) {
	u, err := DecodeUserConfig(golden(t, "config_user_scram.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(u.Scram, goldenUserConfig.Scram) || !maps.Equal(u.Other, goldenUserConfig.Other) {
		t.Errorf("decoded %+v", u)
	}
	if !bytes.Equal(u.Encode(), golden(t, "config_user_scram.json")) {
		t.Errorf("re-encoded %s", u.Encode())
	}
	c, err := DecodeConfigChangeNotification(golden(t, "config_change_user.json"))
	if err != nil || c.EntityType != ConfigTypeUser || c.EntityName != "alice%40example.com" {
		t.Fatalf("change %+v %v", c, err)
	}
	if user, ok, err := UserCredentialEntity(c.EntityName); err != nil || !ok || user != "alice@example.com" {
		t.Errorf("entity %q %v %v", user, ok, err)
	}
}

func TestUserConfigEmpty(t *testing.T) {
	for _, data := range []string{"", "null", `{"version":1}`, `{"version":1,"config":{}}`} {
		u, err := DecodeUserConfig([]byte(data))
		if err != nil || len(u.Scram) != 0 || len(u.Other) != 0 || u.Scram == nil || u.Other == nil {
			t.Errorf("%q: %+v %v", data, u, err)
		}
	}
	if got := string(SplitUserConfig(nil).Encode()); got != `{"version":1,"config":{}}` {
		t.Errorf("empty user config = %s", got)
	}
}

func TestUserPaths(t *testing.T) {
	for user, want := range map[string]string{
		"alice":        "/config/users/alice",
		"User:alice":   "/config/users/User%3Aalice",
		"a b*c+d/e":    "/config/users/a%20b%2Ac%2Bd%2Fe",
		"CN=x,O=y":     "/config/users/CN%3Dx%2CO%3Dy",
		"ünïcode":      "/config/users/%C3%BCn%C3%AFcode",
		"dots.dash-_1": "/config/users/dots.dash-_1",
	} {
		if got := UserConfigPath(user); got != want {
			t.Errorf("UserConfigPath(%q) = %s, want %s", user, got, want)
		}
		back, ok, err := UserCredentialEntity(UserEntityPath(user)[len("users/"):])
		if err != nil || !ok || back != user {
			t.Errorf("entity of %q: %q %v %v", user, back, ok, err)
		}
	}
	for name, wantOK := range map[string]bool{"alice/clients/app": false, "<default>": false, "<default>/clients/<default>": false} {
		if _, ok, err := UserCredentialEntity(name); err != nil || ok != wantOK {
			t.Errorf("%q: ok=%v err=%v", name, ok, err)
		}
	}
	for _, name := range []string{"", "a/b", "a/clients/", "/x", "a%zz"} {
		if _, _, err := UserCredentialEntity(name); err == nil {
			t.Errorf("%q accepted", name)
		}
	}
}

// FuzzDecodeUserConfig: never panics; whatever decodes re-encodes to a node
// that decodes to the same credentials and other keys.
func FuzzDecodeUserConfig(f *testing.F) {
	seedAll(f)
	f.Add([]byte(`{"version":1,"config":{"SCRAM-SHA-256":1,"x":{"a":[1]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := DecodeUserConfig(b)
		if err != nil {
			return
		}
		u2, err := DecodeUserConfig(u.Encode())
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", u.Encode(), err)
		}
		if !maps.Equal(u.Scram, u2.Scram) || !maps.Equal(u.Other, u2.Other) {
			t.Fatalf("round trip changed %+v to %+v", u, u2)
		}
	})
}

// FuzzUserCredentialEntity: never panics; an accepted user maps back to
// the same entity name.
func FuzzUserCredentialEntity(f *testing.F) {
	for _, s := range []string{"alice", "User%3Aalice", "a/clients/b", "<default>", "%", "a+b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		user, ok, err := UserCredentialEntity(name)
		if err != nil || !ok {
			return
		}
		if _, ok2, err := UserCredentialEntity(Sanitize(user)); err != nil || !ok2 {
			t.Fatalf("user %q of %q: sanitized form rejected: %v", user, name, err)
		}
	})
}
