package main

// javaRandom is java.util.Random, whose sequence from seed 0 decides
// Kafka's payload bytes and which --payload-file payload each record
// carries; reproducing it makes the records the same as Kafka's.
type javaRandom struct{ seed int64 }

const (
	randMultiplier = 0x5DEECE66D
	randMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ randMultiplier) & randMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*randMultiplier + 0xB) & randMask
	return int32(uint64(r.seed) >> (48 - bits))
}

// nextInt is Random.nextInt(bound), bound > 0.
func (r *javaRandom) nextInt(bound int32) int32 {
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	for u := v; ; u = r.next(31) {
		v = u % bound
		if u-v+m >= 0 { // int32 overflow means a biased draw: retry
			return v
		}
	}
}
