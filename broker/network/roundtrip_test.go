package network

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafka34 is Apache Kafka 3.4's advertised range for every key a
// ZooKeeper-mode broker serves.
var kafka34 = map[int16][2]int16{
	0: {0, 9}, 1: {0, 13}, 2: {0, 7}, 3: {0, 12}, 4: {0, 7}, 5: {0, 4}, 6: {0, 8}, 7: {0, 3},
	8: {0, 8}, 9: {0, 8}, 10: {0, 4}, 11: {0, 9}, 12: {0, 4}, 13: {0, 5}, 14: {0, 5}, 15: {0, 5},
	16: {0, 4}, 17: {0, 1}, 18: {0, 3}, 19: {0, 7}, 20: {0, 6}, 21: {0, 2}, 22: {0, 4}, 23: {0, 4},
	24: {0, 3}, 25: {0, 3}, 26: {0, 3}, 27: {0, 1}, 28: {0, 3}, 29: {0, 3}, 30: {0, 3}, 31: {0, 3},
	32: {0, 4}, 33: {0, 2}, 34: {0, 2}, 35: {0, 4}, 36: {0, 2}, 37: {0, 3}, 38: {0, 3}, 39: {0, 2},
	40: {0, 2}, 41: {0, 3}, 42: {0, 2}, 43: {0, 2}, 44: {0, 1}, 45: {0, 0}, 46: {0, 0}, 47: {0, 0},
	48: {0, 1}, 49: {0, 1}, 50: {0, 0}, 51: {0, 0}, 56: {0, 2}, 60: {0, 0}, 61: {0, 0}, 65: {0, 0},
	66: {0, 0},
}

// Every (key, version) of the Kafka 3.4 table survives client framing →
// server decoding → re-encoding byte for byte, with the right header
// version.
func TestFrameRoundTripAllKafka34Versions(t *testing.T) {
	table := func(k int16) (int16, int16, bool) {
		r, ok := kafka34[k]
		return r[0], r[1], ok
	}
	n := 0
	for key, r := range kafka34 {
		for v := r[0]; v <= r[1]; v++ {
			req := kmsg.RequestForKey(key)
			if req == nil {
				t.Fatalf("kmsg lacks key %d", key)
			}
			req.SetVersion(v)
			frame := appendRequestFrame(nil, req, 77, "rt")
			d, err := decodeRequest(frame[4:], table)
			if err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(key), v, err)
			}
			if d.fallback || d.req.CorrelationID != 77 || d.req.Key != key || d.req.Version != v {
				t.Fatalf("%s v%d: decoded %+v", kmsg.NameForKey(key), v, d.req)
			}
			if key == 7 && v == 0 {
				if d.req.ClientID != nil {
					t.Fatal("ControlledShutdown v0 has no client id")
				}
			} else if d.req.ClientIDOrEmpty() != "rt" {
				t.Fatalf("%s v%d: client id %v", kmsg.NameForKey(key), v, d.req.ClientID)
			}
			if again := appendRequestFrame(nil, d.req.Body, 77, "rt"); !bytes.Equal(again, frame) {
				t.Fatalf("%s v%d: re-encoding differs\n%x\n%x", kmsg.NameForKey(key), v, frame, again)
			}
			n++
		}
	}
	if n < 250 {
		t.Fatalf("only %d versions checked", n)
	}
}
