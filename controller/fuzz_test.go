package controller

import (
	"encoding/base64"
	"slices"
	"testing"
)

// FuzzDecodeTopicID: decodeTopicID never panics; an input that is not the
// 22-character unpadded base64url form of 16 bytes yields the zero id; a
// valid one round-trips.
func FuzzDecodeTopicID(f *testing.F) {
	f.Add("ztFyzQr5QwmEYeGhG6khTg")
	f.Add("")
	f.Add("AAAAAAAAAAAAAAAAAAAAAQ")
	f.Add("not-base64!")
	f.Add("ztFyzQr5QwmEYeGhG6khTg==")
	f.Fuzz(func(t *testing.T, s string) {
		id := decodeTopicID(s)
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != 16 {
			if id != [16]byte{} {
				t.Fatalf("invalid %q decoded to %x", s, id)
			}
			return
		}
		if !slices.Equal(id[:], b) {
			t.Fatalf("%q decoded to %x, want %x", s, id, b)
		}
	})
}

// FuzzAssignReplicas checks the assignment invariants for arbitrary inputs: the
// partition ids are exactly startPartitionID.. , each list has rf distinct
// brokers from the input, and with racks no rack holds two replicas of a
// partition while another rack holds none.
func FuzzAssignReplicas(f *testing.F) {
	f.Add(uint8(5), uint8(10), uint8(3), int8(0), int8(0), uint8(0))
	f.Add(uint8(6), uint8(7), uint8(3), int8(0), int8(0), uint8(3))
	f.Add(uint8(4), uint8(5), uint8(3), int8(-1), int8(3), uint8(3))
	f.Add(uint8(1), uint8(1), uint8(1), int8(-1), int8(-1), uint8(1))
	f.Fuzz(func(t *testing.T, nBrokers, nParts, rf uint8, fixed, startP int8, racks uint8) {
		n := int(nBrokers%12) + 1
		parts := int(nParts%40) + 1
		r := int(rf%uint8(n)) + 1
		rackNames := []string{"a", "b", "c", "d"}
		nr := int(racks % 5)
		var brokers []BrokerMetadata
		rackOf := map[int32]string{}
		for i := 0; i < n; i++ {
			b := BrokerMetadata{ID: int32(10 + i*3)}
			if nr > 0 {
				name := rackNames[i%nr]
				b.Rack = &name
				rackOf[b.ID] = name
			}
			brokers = append(brokers, b)
		}
		got, err := AssignReplicasToBrokers(brokers, parts, r, int(fixed), int(startP))
		if err != nil {
			t.Fatal(err)
		}
		first := max(0, int(startP))
		if len(got) != parts {
			t.Fatalf("%d partitions, want %d", len(got), parts)
		}
		distinctRacks := map[string]bool{}
		for _, name := range rackOf {
			distinctRacks[name] = true
		}
		for p := first; p < first+parts; p++ {
			rs, ok := got[int32(p)]
			if !ok || len(rs) != r {
				t.Fatalf("partition %d: %v", p, rs)
			}
			seen := map[int32]bool{}
			perRack := map[string]int{}
			for _, b := range rs {
				if seen[b] || b < 10 || (b-10)%3 != 0 || int(b-10)/3 >= n {
					t.Fatalf("partition %d has a bad or repeated broker: %v", p, rs)
				}
				seen[b] = true
				perRack[rackOf[b]]++
			}
			if nr > 0 {
				for _, c := range perRack {
					if c > 1 && len(perRack) < len(distinctRacks) {
						t.Fatalf("partition %d: %v puts two replicas in one rack while another rack is empty", p, rs)
					}
				}
			}
		}
	})
}
