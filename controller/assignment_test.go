package controller

import (
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func plain(ids ...int32) []BrokerMetadata {
	out := make([]BrokerMetadata, len(ids))
	for i, id := range ids {
		out[i] = BrokerMetadata{ID: id}
	}
	return out
}

func racked(m map[int32]string) []BrokerMetadata {
	var out []BrokerMetadata
	for id, r := range m {
		out = append(out, BrokerMetadata{ID: id, Rack: &r})
	}
	return out
}

// Golden tables of Kafka's rack-unaware and rack-aware assignments
// (fixedStartIndex = 0).
func TestAssignReplicasToBrokersGolden(t *testing.T) {
	cases := []struct {
		name    string
		brokers []BrokerMetadata
		n, rf   int
		fixed   int
		startP  int
		want    map[int32][]int32
	}{
		{
			name: "rack-unaware 5 brokers 10 partitions rf3", brokers: plain(4, 2, 0, 3, 1), n: 10, rf: 3, fixed: 0, startP: -1,
			want: map[int32][]int32{
				0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
				5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
			},
		},
		{
			name:    "rack-aware six brokers three racks",
			brokers: racked(map[int32]string{0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}),
			n:       7, rf: 3, fixed: 0, startP: 0,
			want: map[int32][]int32{
				0: {0, 3, 1}, 1: {3, 1, 5}, 2: {1, 5, 4}, 3: {5, 4, 2}, 4: {4, 2, 0}, 5: {2, 0, 3}, 6: {0, 4, 2},
			},
		},
		{
			name:    "rack-aware skipping",
			brokers: racked(map[int32]string{0: "a", 1: "a", 2: "b", 3: "c"}),
			n:       5, rf: 3, fixed: 0, startP: 0,
			want: map[int32][]int32{
				0: {0, 2, 3}, 1: {2, 3, 1}, 2: {3, 1, 2}, 3: {1, 2, 3}, 4: {0, 2, 3},
			},
		},
		{
			name: "single broker", brokers: plain(7), n: 3, rf: 1, fixed: 0, startP: 0,
			want: map[int32][]int32{0: {7}, 1: {7}, 2: {7}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AssignReplicasToBrokers(tc.brokers, tc.n, tc.rf, tc.fixed, tc.startP)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// "Same input with start 2, shift 1": the random path, checked through the
// internal function with explicit start/shift values.
func TestAssignRackUnawareStartAndShift(t *testing.T) {
	brokers := []int32{0, 1, 2, 3, 4}
	n := len(brokers)
	start, shift := 2, 1
	got := map[int32][]int32{}
	for p := 0; p < 10; p++ {
		if p > 0 && p%n == 0 {
			shift++
		}
		first := (p + start) % n
		r := []int32{brokers[first]}
		for j := 0; j < 2; j++ {
			r = append(r, brokers[replicaIndex(first, shift, j, n)])
		}
		got[int32(p)] = r
	}
	want := map[int32][]int32{0: {2, 4, 0}, 1: {3, 0, 1}, 2: {4, 1, 2}, 3: {0, 2, 3}, 4: {1, 3, 4}, 5: {2, 0, 1}, 9: {1, 4, 0}}
	for p, w := range want {
		if !reflect.DeepEqual(got[p], w) {
			t.Fatalf("p%d = %v, want %v", p, got[p], w)
		}
	}
}

func TestAssignReplicasRandomProperties(t *testing.T) {
	brokers := racked(map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"})
	for range 50 {
		got, err := AssignReplicasToBrokers(brokers, 12, 3, -1, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 12 {
			t.Fatalf("got %d partitions", len(got))
		}
		for p, rs := range got {
			racks := map[string]bool{}
			for _, r := range rs {
				racks[map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}[r]] = true
			}
			if len(racks) != 3 {
				t.Fatalf("partition %d replicas %v not spread over three racks", p, rs)
			}
		}
	}
	plainGot, err := AssignReplicasToBrokers(plain(1, 2, 3), 6, 3, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range plainGot {
		seen := map[int32]bool{}
		for _, r := range rs {
			if seen[r] {
				t.Fatalf("partition %d repeats broker: %v", p, rs)
			}
			seen[r] = true
		}
	}
}

func TestAssignReplicasErrors(t *testing.T) {
	a := "a"
	cases := []struct {
		name    string
		brokers []BrokerMetadata
		n, rf   int
		want    error
	}{
		{"zero partitions", plain(1, 2), 0, 1, kerr.InvalidPartitions},
		{"zero rf", plain(1, 2), 1, 0, kerr.InvalidReplicationFactor},
		{"rf too large", plain(1, 2), 1, 3, kerr.InvalidReplicationFactor},
		{"mixed racks", []BrokerMetadata{{ID: 1, Rack: &a}, {ID: 2}}, 1, 1, kerr.InvalidReplicaAssignment},
		{"duplicate broker", plain(1, 1), 1, 1, kerr.InvalidReplicaAssignment},
	}
	for _, tc := range cases {
		_, err := AssignReplicasToBrokers(tc.brokers, tc.n, tc.rf, 0, 0)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Safe mode drops racks when some are missing.
	safe := ApplyRackAwareMode([]BrokerMetadata{{ID: 1, Rack: &a}, {ID: 2}}, RackAwareSafe)
	if _, err := AssignReplicasToBrokers(safe, 2, 2, 0, 0); err != nil {
		t.Fatalf("safe mode: %v", err)
	}
	if got := ApplyRackAwareMode([]BrokerMetadata{{ID: 1, Rack: &a}}, RackAwareSafe); got[0].Rack == nil {
		t.Fatal("safe mode dropped racks although every broker has one")
	}
	if got := ApplyRackAwareMode([]BrokerMetadata{{ID: 1, Rack: &a}}, RackAwareDisabled); got[0].Rack != nil {
		t.Fatal("disabled mode kept racks")
	}
}

// Partition addition continues the existing assignment: brokers [0..4], partition 0 = [1,...], 3
// existing partitions, grow to 5 → p3 = 4,1,2; p4 = 0,2,3.
func TestAssignReplicasForNewPartitions(t *testing.T) {
	existing := map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 4}, 2: {3, 4, 0}}
	got, err := AssignReplicasForNewPartitions(plain(0, 1, 2, 3, 4), existing, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]int32{3: {4, 1, 2}, 4: {0, 2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if _, err := AssignReplicasForNewPartitions(plain(0, 1), existing, 3); !errors.Is(err, kerr.InvalidPartitions) {
		t.Fatalf("no increase: err = %v", err)
	}
}

func TestValidateReplicaAssignment(t *testing.T) {
	cases := []struct {
		name  string
		a     map[int32][]int32
		known []int32
		ok    bool
	}{
		{"ok", map[int32][]int32{0: {1, 2}, 1: {2, 1}}, []int32{1, 2}, true},
		{"ok no broker check", map[int32][]int32{0: {9}}, nil, true},
		{"empty", map[int32][]int32{}, nil, false},
		{"gap", map[int32][]int32{0: {1}, 2: {1}}, nil, false},
		{"uneven", map[int32][]int32{0: {1, 2}, 1: {1}}, nil, false},
		{"duplicate", map[int32][]int32{0: {1, 1}}, nil, false},
		{"unknown broker", map[int32][]int32{0: {1, 3}}, []int32{1, 2}, false},
		{"no replicas", map[int32][]int32{0: {}}, nil, false},
	}
	for _, tc := range cases {
		err := ValidateReplicaAssignment(tc.a, tc.known)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, kerr.InvalidReplicaAssignment) {
			t.Errorf("%s: error does not wrap InvalidReplicaAssignment: %v", tc.name, err)
		}
	}
}
