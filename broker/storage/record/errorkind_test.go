package record

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateBatch's errors carry the validation kind Kafka counts in
// BrokerTopicMetrics beside their kerr code, and the kind leaves the
// message unchanged.
func TestValidateBatchErrorKinds(t *testing.T) {
	build := func(o BuildOptions, recs ...Record) []byte {
		for i := range recs {
			recs[i].OffsetDelta = int32(i)
		}
		return Build(o, recs)
	}
	crc := build(DefaultBuildOptions(), Record{Key: []byte("k"), Value: []byte("value")})
	crc[len(crc)-2] ^= 0xff
	gap := DefaultBuildOptions()
	gap.LastOffsetDelta = 3
	for _, c := range []struct {
		what  string
		batch []byte
		o     ValidateOptions
		kind  error
		code  *kerr.Error
	}{
		{"bad crc", crc, ValidateOptions{FromClient: true}, ErrInvalidCRC, kerr.CorruptMessage},
		{"no key", build(DefaultBuildOptions(), Record{Value: []byte("v")}), ValidateOptions{FromClient: true, RequireKeys: true}, ErrNoKey, kerr.InvalidRecord},
		{"offset gap", build(gap, Record{Value: []byte("v")}), ValidateOptions{FromClient: true}, ErrInvalidOffsetOrSequence, kerr.InvalidRecord},
	} {
		err := ValidateBatch(c.batch, c.o)
		if !errors.Is(err, c.kind) || !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want kind %v and code %v", c.what, err, c.kind, c.code)
			continue
		}
		var ke *kerr.Error
		if !errors.As(err, &ke) || ke != c.code {
			t.Errorf("%s: errors.As finds %v, want %v", c.what, ke, c.code)
		}
		if k := WithKind(errors.New("m"), c.kind); k.Error() != "m" {
			t.Errorf("WithKind changed the message to %q", k.Error())
		}
	}
	if err := ValidateBatch(build(DefaultBuildOptions(), Record{Key: []byte("k"), Value: []byte("v")}), ValidateOptions{FromClient: true, RequireKeys: true}); err != nil {
		t.Errorf("a valid batch: %v", err)
	}
}
