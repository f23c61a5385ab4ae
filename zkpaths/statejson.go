package zkpaths

import "math"

// A state znode is read for every partition when a controller fails over
// (10,000 reads at 10,000 partitions), so its decoding has a fast path.
// decodeLeaderAndIsrFast accepts only JSON of the form Kafka and Klassik
// write: one object without whitespace whose members are the known keys,
// each at most once, with integer values ("isr" an array of integers).
// For any input it accepts it returns what DecodeLeaderAndIsr's general
// decoder (encoding/json) returns; anything else (whitespace, other keys,
// strings, nulls, fractions, numbers out of range, duplicate keys) is left
// to the general decoder, so that both accept and reject exactly the same
// inputs with the same result (FuzzDecodeLeaderAndIsrFast checks it).

// state znode keys, as bits of the set already seen.
const (
	stateKeyControllerEpoch = 1 << iota
	stateKeyLeader
	stateKeyVersion
	stateKeyLeaderEpoch
	stateKeyISR
	stateKeyLRS
)

// stateKeys maps each known key (with its quotes and colon) to its bit.
var stateKeys = []struct {
	lit string
	bit int
}{
	{`"controller_epoch":`, stateKeyControllerEpoch},
	{`"leader":`, stateKeyLeader},
	{`"version":`, stateKeyVersion},
	{`"leader_epoch":`, stateKeyLeaderEpoch},
	{`"isr":`, stateKeyISR},
	{`"leader_recovery_state":`, stateKeyLRS},
}

// decodeLeaderAndIsrFast decodes data if it has the form above; ok is false
// when the general decoder must decide.
func decodeLeaderAndIsrFast(data []byte, zkVersion int32) (s LeaderAndIsr, ok bool) {
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return LeaderAndIsr{}, false
	}
	i := 1
	seen := 0
	for {
		// A key we know, seen for the first time.
		bit := 0
		for _, k := range stateKeys {
			if len(data)-i >= len(k.lit) && string(data[i:i+len(k.lit)]) == k.lit {
				bit = k.bit
				i += len(k.lit)
				break
			}
		}
		if bit == 0 || seen&bit != 0 {
			return LeaderAndIsr{}, false
		}
		seen |= bit
		if bit == stateKeyISR {
			if i >= len(data) || data[i] != '[' {
				return LeaderAndIsr{}, false
			}
			i++
			isr := make([]int32, 0, 3)
			if i < len(data) && data[i] == ']' {
				i++
			} else {
				for {
					v, n, ok := scanInt(data[i:], math.MinInt32, math.MaxInt32)
					if !ok {
						return LeaderAndIsr{}, false
					}
					isr = append(isr, int32(v))
					i += n
					if i >= len(data) {
						return LeaderAndIsr{}, false
					}
					if data[i] == ']' {
						i++
						break
					}
					if data[i] != ',' {
						return LeaderAndIsr{}, false
					}
					i++
				}
			}
			s.ISR = isr
		} else {
			lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
			if bit == stateKeyLRS {
				lo, hi = math.MinInt8, math.MaxInt8
			} else if bit == stateKeyVersion {
				// Not decoded: any integer the general decoder skips.
				lo, hi = math.MinInt64, math.MaxInt64
			}
			v, n, ok := scanInt(data[i:], lo, hi)
			if !ok {
				return LeaderAndIsr{}, false
			}
			i += n
			switch bit {
			case stateKeyControllerEpoch:
				s.ControllerEpoch = int32(v)
			case stateKeyLeader:
				s.Leader = int32(v)
			case stateKeyLeaderEpoch:
				s.LeaderEpoch = int32(v)
			case stateKeyLRS:
				s.LeaderRecoveryState = int8(v)
			}
		}
		if i >= len(data) {
			return LeaderAndIsr{}, false
		}
		if data[i] == '}' {
			if i != len(data)-1 {
				return LeaderAndIsr{}, false
			}
			break
		}
		if data[i] != ',' {
			return LeaderAndIsr{}, false
		}
		i++
	}
	const required = stateKeyControllerEpoch | stateKeyLeader | stateKeyLeaderEpoch | stateKeyISR
	if seen&required != required {
		return LeaderAndIsr{}, false
	}
	if seen&stateKeyLRS != 0 && s.LeaderRecoveryState != LeaderRecovered && s.LeaderRecoveryState != LeaderRecovering {
		return LeaderAndIsr{}, false
	}
	s.ZkVersion = zkVersion
	return s, true
}

// scanInt reads a JSON integer (-?(0|[1-9][0-9]*), no fraction or
// exponent) at the start of b within [lo, hi]; n is its length.
func scanInt(b []byte, lo, hi int64) (v int64, n int, ok bool) {
	neg := false
	if n < len(b) && b[n] == '-' {
		neg = true
		n++
	}
	start := n
	var u uint64
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n-start >= 18 { // more digits than any int64 we accept quickly
			return 0, 0, false
		}
		u = u*10 + uint64(b[n]-'0')
		n++
	}
	digits := n - start
	if digits == 0 || (digits > 1 && b[start] == '0') {
		return 0, 0, false
	}
	if n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return 0, 0, false
	}
	v = int64(u)
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		return 0, 0, false
	}
	return v, n, true
}
