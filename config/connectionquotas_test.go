package config

import (
	"strings"
	"testing"
)

func TestMaxConnectionsPerIPOverrides(t *testing.T) {
	m, err := ParseMaxConnectionsPerIPOverrides(" hostName:100 , 127.0.0.1:200,::1:3")
	if err != nil || m["hostName"] != 100 || m["127.0.0.1"] != 200 || m["::1"] != 3 {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := ParseMaxConnectionsPerIPOverrides("bad host:1"); err == nil || !strings.Contains(err.Error(), "contains invalid addresses : bad host") {
		t.Fatalf("invalid host: %v", err)
	}
	if _, err := FromMap(map[string]string{"zookeeper.connect": "localhost:2181", "max.connections.per.ip": "0"}); err == nil ||
		!strings.Contains(err.Error(), "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.") {
		t.Fatalf("zero without overrides: %v", err)
	}
	c, err := FromMap(map[string]string{"zookeeper.connect": "localhost:2181", "listener.name.plaintext.max.connections": "7"})
	if err != nil {
		t.Fatal(err)
	}
	if n, r := c.ListenerConnectionQuota("PLAINTEXT"); n != 7 || r != 2147483647 {
		t.Fatalf("listener quota %d %d", n, r)
	}
}

func TestValidateDynamicChangeKafkaTexts(t *testing.T) {
	base, _ := FromMap(map[string]string{"zookeeper.connect": "localhost:2181", "num.io.threads": "8"})
	for v, want := range map[string]string{
		"17": "Dynamic thread count update validation failed for num.io.threads=17, value should not be greater than double the current value 8",
		"3":  "Dynamic thread count update validation failed for num.io.threads=3, value should be at least half the current value 8",
		"16": "",
		"4":  "",
	} {
		next, _ := FromMap(map[string]string{"zookeeper.connect": "localhost:2181", "num.io.threads": v})
		err := ValidateDynamicChange(base, next)
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("num.io.threads 8 → %s: %v", v, err)
		}
	}
	next, _ := FromMap(map[string]string{"zookeeper.connect": "localhost:2181", "listener.name.plaintext.max.connections": "0"})
	if err := ValidateDynamicChange(base, next); err == nil || err.Error() != "Invalid max.connections 0" {
		t.Errorf("listener max.connections 0: %v", err)
	}
}

func TestIPConfigs(t *testing.T) {
	if err := ValidateIPConfigs(map[string]string{"connection_creation_rate": "10"}); err != nil {
		t.Fatal(err)
	}
	if err := ValidateIPConfigs(map[string]string{"producer_byte_rate": "10"}); err == nil {
		t.Fatal("a user quota key accepted for an IP")
	}
	if err := ValidateIPEntity("<default>"); err != nil {
		t.Fatal(err)
	}
	if err := ValidateIPEntity("::1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseIPConnectionRate("-1"); err == nil {
		t.Fatal("negative rate accepted")
	}
}

// FuzzConnectionQuotaValues: the override list and the IP rate parse
// without panicking; a parsed override list has only valid host
// patterns, and a parsed rate is ≥ 0.
func FuzzConnectionQuotaValues(f *testing.F) {
	for _, s := range []string{"", "a:1", "127.0.0.1:200,host:3", "::1:4", ":", "x:y", "10.0", "-3", "2147483648"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if m, err := ParseMaxConnectionsPerIPOverrides(s); err == nil {
			for h := range m {
				if !validHostChars.MatchString(h) {
					t.Fatalf("invalid host %q accepted", h)
				}
			}
		}
		if n, err := ParseIPConnectionRate(s); err == nil && n < 0 {
			t.Fatalf("negative rate %d", n)
		}
	})
}
