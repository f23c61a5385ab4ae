package txn

import (
	"context"
	"sync"

	"github.com/klassik/klassik/zkpaths"
)

// ProducerIDBlockSize is Kafka's block size: a broker claims 1000 ids at a
// time.
const ProducerIDBlockSize = 1000

// ProducerIDManager hands out producer ids from blocks claimed in ZooKeeper
// (Kafka's ZkProducerIdManager). Ids come from blocks of 1000 that this
// broker claims under /latest_producer_id_block with a conditional write on
// the node version, retried when another broker won — the classic path, so
// no controller RPC (AllocateProducerIds) is needed. Both the idempotent
// producer (InitProducerId without a transactional id, answered by any
// broker) and the transaction coordinator draw from it.
type ProducerIDManager struct {
	brokerID int32
	claim    func(brokerID int32) (zkpaths.ProducerIDBlock, error)

	// mu guards the following; it is held across a block claim so that
	// concurrent callers wait for the one claim instead of wasting blocks.
	mu        sync.Mutex
	next, end int64 // next id to hand out; end inclusive; next > end = empty
}

// NewProducerIDManager returns a manager that claims blocks with claim.
func NewProducerIDManager(brokerID int32, claim func(brokerID int32) (zkpaths.ProducerIDBlock, error)) *ProducerIDManager {
	return &ProducerIDManager{brokerID: brokerID, claim: claim, next: 0, end: -1}
}

// NextID returns a fresh producer id, claiming a new block when the current
// one is used up. A claim failure (ZooKeeper down) is returned as is; the
// callers answer COORDINATOR_NOT_AVAILABLE (retriable), as Kafka does.
func (m *ProducerIDManager) NextID(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next > m.end {
		b, err := m.claim(m.brokerID)
		if err != nil {
			return -1, err
		}
		m.next, m.end = b.BlockStart, b.BlockEnd
	}
	id := m.next
	m.next++
	return id, nil
}
