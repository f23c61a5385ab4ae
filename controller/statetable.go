package controller

import "slices"

// stateRow is one state of a state machine, as Kafka's PartitionState and
// ReplicaState objects carry it: its name and the states it may be entered
// from.
type stateRow[S ~int8] struct {
	name          string
	validPrevious []S
}

// stateTable holds a state machine's states, indexed by state value. Value
// 0 is the NonExistent state, which also names any value outside the table.
type stateTable[S ~int8] []stateRow[S]

func (t stateTable[S]) name(s S) string {
	if int(s) < 0 || int(s) >= len(t) {
		s = 0
	}
	return t[s].name
}

// valid reports whether the table allows the move from one state to another.
func (t stateTable[S]) valid(from, to S) bool {
	return int(to) >= 0 && int(to) < len(t) && slices.Contains(t[to].validPrevious, from)
}
