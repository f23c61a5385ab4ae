package config

import "testing"

func TestDynamicPrecedenceAndSubscribers(t *testing.T) {
	static, err := FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181", "message.max.bytes": "2000000"})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDynamic(static)
	var calls []string
	d.Subscribe([]string{"message.max.bytes"}, func(old, new *Config) {
		v, _ := new.Value("message.max.bytes")
		calls = append(calls, v)
	})
	if err := d.Update(map[string]string{"message.max.bytes": "1000"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := d.Current().MessageMaxBytes; got != 1000 {
		t.Fatalf("cluster default over static: message.max.bytes = %d, want 1000", got)
	}
	if s := d.Current().Source("message.max.bytes"); s != SourceDynamicDefaultBroker {
		t.Fatalf("source = %d, want DYNAMIC_DEFAULT_BROKER_CONFIG", s)
	}
	if err := d.Update(map[string]string{"message.max.bytes": "1000"}, map[string]string{"message.max.bytes": "3000"}); err != nil {
		t.Fatal(err)
	}
	if got := d.Current().MessageMaxBytes; got != 3000 {
		t.Fatalf("per-broker over default: message.max.bytes = %d, want 3000", got)
	}
	if err := d.Update(map[string]string{"message.max.bytes": "-5"}, nil); err == nil {
		t.Fatal("an invalid dynamic value was accepted")
	}
	if got := d.Current().MessageMaxBytes; got != 3000 {
		t.Fatalf("a refused update changed the config: %d", got)
	}
	if err := d.Update(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, s := d.Current().MessageMaxBytes, d.Current().Source("message.max.bytes"); got != 2000000 || s != SourceStaticBroker {
		t.Fatalf("after removing both layers: %d from source %d, want the static 2000000", got, s)
	}
	if len(calls) != 3 || calls[0] != "1000" || calls[1] != "3000" || calls[2] != "2000000" {
		t.Fatalf("subscriber calls = %v, want [1000 3000 2000000]", calls)
	}
}
