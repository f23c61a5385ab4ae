package replica

import (
	"sync"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/purgatory"
)

// watchKeysMax bounds the cache of purgatory watch keys; partitions beyond
// it get their key built on every use.
const watchKeysMax = 1 << 18

// watchKeys caches each partition's purgatory watch key ("topic-N"), which
// every acks=all produce and parked fetch watches and every append wakes:
// built once per partition rather than per request.
var watchKeys struct {
	mu   sync.RWMutex
	keys map[common.TopicPartition]string
}

func cachedPartitionKey(tp common.TopicPartition) string {
	watchKeys.mu.RLock()
	k, ok := watchKeys.keys[tp]
	watchKeys.mu.RUnlock()
	if ok {
		return k
	}
	k = purgatory.TopicPartitionKey(tp.Topic, tp.Partition)
	watchKeys.mu.Lock()
	defer watchKeys.mu.Unlock()
	if watchKeys.keys == nil {
		watchKeys.keys = make(map[common.TopicPartition]string)
	}
	if len(watchKeys.keys) < watchKeysMax {
		watchKeys.keys[tp] = k
	}
	return k
}
