package controller

// Replica placement for new topics and partitions (Kafka's AdminUtils
// assignReplicasToBrokers and AdminZkClient.addPartitions): replicas go
// round-robin from a start index, each later replica shifted further, so
// leaders and followers spread evenly; with racks the brokers are first
// interleaved rack by rack.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// BrokerMetadata is one broker as seen by the assignment algorithm: its id and
// optional rack (broker.rack).
type BrokerMetadata struct {
	ID   int32
	Rack *string
}

// RackAwareMode mirrors Kafka's RackAwareMode: what to do when only some
// brokers have a rack.
type RackAwareMode int

const (
	// RackAwareEnforced fails when some, but not all, brokers have a rack.
	// It is the default for topic creation.
	RackAwareEnforced RackAwareMode = iota
	// RackAwareSafe ignores racks unless every broker has one.
	RackAwareSafe
	// RackAwareDisabled always ignores racks.
	RackAwareDisabled
)

// ApplyRackAwareMode returns the broker list the assignment should use under
// mode: racks are dropped for Disabled, and for Safe when not every broker has
// one. Enforced returns the list unchanged (the assignment rejects a mixed list).
func ApplyRackAwareMode(brokers []BrokerMetadata, mode RackAwareMode) []BrokerMetadata {
	out := slices.Clone(brokers)
	strip := mode == RackAwareDisabled
	if mode == RackAwareSafe {
		for _, b := range brokers {
			if b.Rack == nil {
				strip = true
				break
			}
		}
	}
	if strip {
		for i := range out {
			out[i].Rack = nil
		}
	}
	return out
}

// AssignReplicasToBrokers computes the replica lists of nPartitions partitions
// with replicationFactor replicas each, starting at partition id
// startPartitionID (values < 0 mean 0). fixedStartIndex ≥ 0 fixes both the
// start index and the initial replica shift (deterministic; used by tests and
// partition addition); -1 draws both at random, independently. The first
// replica of each list is the preferred leader.
//
// Brokers are sorted by id first (Klassik's choice), so the
// result does not depend on the caller's order. If every broker has a rack the
// rack-aware algorithm is used, if none has one the rack-unaware one; a mixed
// list is an error (apply ApplyRackAwareMode first for Safe/Disabled).
//
// Errors wrap kerr.InvalidPartitions, kerr.InvalidReplicationFactor or
// kerr.InvalidReplicaAssignment so callers can answer with Kafka's codes.
func AssignReplicasToBrokers(brokers []BrokerMetadata, nPartitions, replicationFactor int, fixedStartIndex, startPartitionID int) (map[int32][]int32, error) {
	if nPartitions <= 0 {
		return nil, fmt.Errorf("%w: number of partitions must be larger than 0", kerr.InvalidPartitions)
	}
	if replicationFactor <= 0 {
		return nil, fmt.Errorf("%w: replication factor must be larger than 0", kerr.InvalidReplicationFactor)
	}
	if replicationFactor > len(brokers) {
		return nil, fmt.Errorf("%w: replication factor: %d larger than available brokers: %d", kerr.InvalidReplicationFactor, replicationFactor, len(brokers))
	}
	sorted := slices.Clone(brokers)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].ID == sorted[i-1].ID {
			return nil, fmt.Errorf("%w: duplicate broker id %d in broker list", kerr.InvalidReplicaAssignment, sorted[i].ID)
		}
	}
	withRack := 0
	for _, b := range sorted {
		if b.Rack != nil {
			withRack++
		}
	}
	switch {
	case withRack == 0:
		ids := make([]int32, len(sorted))
		for i, b := range sorted {
			ids[i] = b.ID
		}
		return assignRackUnaware(ids, nPartitions, replicationFactor, fixedStartIndex, startPartitionID), nil
	case withRack == len(sorted):
		return assignRackAware(sorted, nPartitions, replicationFactor, fixedStartIndex, startPartitionID), nil
	default:
		return nil, fmt.Errorf("%w: not all brokers have rack information for replica rack aware assignment", kerr.InvalidReplicaAssignment)
	}
}

// replicaIndex is the position of the j-th follower of the replica at first:
// an offset between 1 and n-1 from first, so it never lands on the leader.
func replicaIndex(first, shift, j, n int) int {
	return (first + 1 + (shift+j)%(n-1)) % n
}

func startValues(n, fixedStartIndex, startPartitionID int) (start, shift, p int) {
	if fixedStartIndex >= 0 {
		start, shift = fixedStartIndex, fixedStartIndex
	} else {
		// Two independent draws, as Kafka does.
		start, shift = rand.IntN(n), rand.IntN(n)
	}
	return start, shift, max(0, startPartitionID)
}

func assignRackUnaware(brokers []int32, nPartitions, rf, fixedStartIndex, startPartitionID int) map[int32][]int32 {
	n := len(brokers)
	return placePartitions(n, nPartitions, fixedStartIndex, startPartitionID, func(first, shift int) []int32 {
		replicas := []int32{brokers[first]}
		for j := 0; j < rf-1; j++ {
			replicas = append(replicas, brokers[replicaIndex(first, shift, j, n)])
		}
		return replicas
	})
}

// placePartitions is the loop both placements share: partition after
// partition from startPartitionID, the leader moves one broker on, and the
// followers' shift grows by one each time the partition id wraps round the
// n brokers; place returns a partition's replicas given its leader's index
// and the shift.
func placePartitions(n, nPartitions, fixedStartIndex, startPartitionID int, place func(first, shift int) []int32) map[int32][]int32 {
	start, shift, p := startValues(n, fixedStartIndex, startPartitionID)
	out := make(map[int32][]int32, nPartitions)
	for range nPartitions {
		if p > 0 && p%n == 0 {
			shift++
		}
		out[int32(p)] = place((p+start)%n, shift)
		p++
	}
	return out
}

// rackAlternatedBrokers interleaves brokers by rack: racks in name order,
// ids in order within a rack, one broker per rack per round.
func rackAlternatedBrokers(brokers []BrokerMetadata) ([]int32, map[int32]string) {
	byRack := map[string][]int32{}
	rackOf := map[int32]string{}
	for _, b := range brokers {
		byRack[*b.Rack] = append(byRack[*b.Rack], b.ID)
		rackOf[b.ID] = *b.Rack
	}
	racks := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		racks = append(racks, r)
		slices.Sort(ids)
	}
	sort.Strings(racks)
	var out []int32
	for round := 0; len(out) < len(brokers); round++ {
		for _, r := range racks {
			if round < len(byRack[r]) {
				out = append(out, byRack[r][round])
			}
		}
	}
	return out, rackOf
}

func assignRackAware(brokers []BrokerMetadata, nPartitions, rf, fixedStartIndex, startPartitionID int) map[int32][]int32 {
	list, rackOf := rackAlternatedBrokers(brokers)
	n := len(list)
	numRacks := 0
	{
		seen := map[string]bool{}
		for _, r := range rackOf {
			if !seen[r] {
				seen[r] = true
				numRacks++
			}
		}
	}
	return placePartitions(n, nPartitions, fixedStartIndex, startPartitionID, func(first, shift int) []int32 {
		leader := list[first]
		replicas := []int32{leader}
		usedRacks := map[string]bool{rackOf[leader]: true}
		usedBrokers := map[int32]bool{leader: true}
		k := 0 // not reset per follower
		for range rf - 1 {
			for {
				b := list[replicaIndex(first, shift*numRacks, k, n)]
				k++
				rackOK := !usedRacks[rackOf[b]] || len(usedRacks) == numRacks
				brokerOK := !usedBrokers[b] || len(usedBrokers) == n
				if rackOK && brokerOK {
					replicas = append(replicas, b)
					usedRacks[rackOf[b]] = true
					usedBrokers[b] = true
					break
				}
			}
		}
		return replicas
	})
}

// AssignReplicasForNewPartitions computes the replicas of the partitions added
// when a topic with assignment existing grows to newPartitionCount partitions
// (Kafka's AdminZkClient.addPartitions without an explicit assignment): the
// start index continues from the existing partition 0's first replica.
// Only the new partitions are returned. The replication factor is the size of
// partition 0's replica list; the start index (and shift) is the position in
// the id-sorted broker list of the first broker whose id is ≥ partition 0's
// first replica, or 0.
func AssignReplicasForNewPartitions(brokers []BrokerMetadata, existing map[int32][]int32, newPartitionCount int) (map[int32][]int32, error) {
	cur := len(existing)
	if newPartitionCount <= cur {
		return nil, fmt.Errorf("%w: topic currently has %d partitions, %d would not be an increase", kerr.InvalidPartitions, cur, newPartitionCount)
	}
	p0, ok := existing[0]
	if !ok || len(p0) == 0 {
		return nil, fmt.Errorf("%w: the existing assignment has no replicas for partition 0", kerr.InvalidReplicaAssignment)
	}
	sorted := slices.Clone(brokers)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	start := 0
	for i, b := range sorted {
		if b.ID >= p0[0] {
			start = i
			break
		}
	}
	return AssignReplicasToBrokers(sorted, newPartitionCount-cur, len(p0), start, cur)
}

// ValidateReplicaAssignment checks an explicit assignment (kafka-topics
// --replica-assignment, CreateTopics with assignments): at least one
// partition, every partition has the same non-zero number of replicas, no
// broker twice in a partition, partition ids exactly 0..N-1, and, when
// knownBrokers is non-nil, every replica is a known broker. Errors wrap
// kerr.InvalidReplicaAssignment.
func ValidateReplicaAssignment(assignment map[int32][]int32, knownBrokers []int32) error {
	if len(assignment) == 0 {
		return fmt.Errorf("%w: the assignment has no partitions", kerr.InvalidReplicaAssignment)
	}
	ids := make([]int32, 0, len(assignment))
	for p := range assignment {
		ids = append(ids, p)
	}
	slices.Sort(ids)
	for i, p := range ids {
		if p != int32(i) {
			return fmt.Errorf("%w: partitions should be a consecutive 0-based integer sequence, got %v", kerr.InvalidReplicaAssignment, ids)
		}
	}
	rf := len(assignment[0])
	for _, p := range ids {
		replicas := assignment[p]
		if len(replicas) == 0 {
			return fmt.Errorf("%w: partition %d has no replicas", kerr.InvalidReplicaAssignment, p)
		}
		if len(replicas) != rf {
			return fmt.Errorf("%w: partition %d has %d replicas while partition 0 has %d; all partitions should have the same number of replicas", kerr.InvalidReplicaAssignment, p, len(replicas), rf)
		}
		seen := map[int32]bool{}
		for _, r := range replicas {
			if r < 0 {
				return fmt.Errorf("%w: partition %d has a negative broker id %d", kerr.InvalidReplicaAssignment, p, r)
			}
			if seen[r] {
				return fmt.Errorf("%w: duplicate replica assignment found for partition %d: %v", kerr.InvalidReplicaAssignment, p, replicas)
			}
			seen[r] = true
			if knownBrokers != nil && !slices.Contains(knownBrokers, r) {
				return fmt.Errorf("%w: unknown broker %d in the assignment of partition %d", kerr.InvalidReplicaAssignment, r, p)
			}
		}
	}
	return nil
}
