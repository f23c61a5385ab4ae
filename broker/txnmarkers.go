package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/metadata"
	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/txn"
)

// markerChannel is how this broker's transaction coordinator reaches
// partition leaders (the network half of Kafka's
// TransactionMarkerChannelManager): leaders come from the metadata cache,
// and each destination broker gets one connection on the inter-broker
// listener, dialed on first use and dialed again after any error. The
// coordinator groups markers per broker and retries; this type only
// carries one request at a time per destination.
type markerChannel struct {
	meta     *metadata.Cache
	listener string
	clientID string
	timeout  time.Duration
	dial     network.DialFunc

	// mu guards the following. It is not held across a round trip: each
	// connection serializes its own requests.
	mu      sync.Mutex
	clients map[int32]*network.Client
	closed  bool
}

func newMarkerChannel(meta *metadata.Cache, listener string, brokerID int32, timeout time.Duration, dial network.DialFunc) *markerChannel {
	return &markerChannel{meta: meta, listener: listener, timeout: timeout, dial: dial,
		clientID: "broker-" + strconv.Itoa(int(brokerID)) + "-txn-marker-sender", clients: map[int32]*network.Client{}}
}

// PartitionLeader returns the cached leader of a partition: -1 while it is
// leaderless, txn.NoSuchPartition once the metadata cache no longer knows it
// (its topic was deleted), so the coordinator drops it from the transaction
// instead of retrying its marker for ever.
func (m *markerChannel) PartitionLeader(topic string, partition int32) int32 {
	p, ok := m.meta.Partition(topic, partition)
	if !ok {
		return txn.NoSuchPartition
	}
	return p.Leader
}

// SendWriteTxnMarkers sends req to broker id and returns its answer. A
// failed round trip drops the connection, so the retry dials afresh (the
// leader may have moved or restarted).
func (m *markerChannel) SendWriteTxnMarkers(ctx context.Context, id int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	cl, err := m.client(ctx, id)
	if err != nil {
		return nil, err
	}
	resp, err := cl.Request(ctx, req)
	if err != nil {
		m.drop(id, cl)
		return nil, fmt.Errorf("broker: WriteTxnMarkers to broker %d: %w", id, err)
	}
	return resp.(*kmsg.WriteTxnMarkersResponse), nil
}

func (m *markerChannel) client(ctx context.Context, id int32) (*network.Client, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, network.ErrClientClosed
	}
	if cl, ok := m.clients[id]; ok {
		m.mu.Unlock()
		return cl, nil
	}
	m.mu.Unlock()
	host, port, ok := m.meta.Endpoint(id, m.listener)
	if !ok {
		return nil, fmt.Errorf("broker: broker %d has no live %s endpoint", id, m.listener)
	}
	cl, err := m.dial(ctx, net.JoinHostPort(host, strconv.Itoa(int(port))), m.clientID, m.timeout)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.clients[id]; ok || m.closed {
		cl.Close()
		if m.closed {
			return nil, network.ErrClientClosed
		}
		return old, nil
	}
	m.clients[id] = cl
	return cl, nil
}

func (m *markerChannel) drop(id int32, cl *network.Client) {
	m.mu.Lock()
	if m.clients[id] == cl {
		delete(m.clients, id)
	}
	m.mu.Unlock()
	cl.Close()
}

// close closes every connection; later sends fail.
func (m *markerChannel) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for id, cl := range m.clients {
		cl.Close()
		delete(m.clients, id)
	}
}
