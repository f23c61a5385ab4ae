package txn

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/purgatory"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Producers commit transactions concurrently while the coordinator keeps
// losing and regaining their partition (a new coordinator epoch each
// time) and markers sometimes fail. Under -race this checks the lock
// order and that Close stops every goroutine; afterwards every
// transaction whose EndTxn(commit) was answered NONE has a COMMIT marker
// on each of its partitions (sent by whichever ownership completed it),
// and no transaction is left half-completed.
func TestConcurrentProducersWhileCoordinatorMoves(t *testing.T) {
	store, mk := group.NewMemStore(), newFakeMarkers()
	cfg := testConfig()
	cfg.AbortTimedOutInterval = 20 * time.Millisecond
	cfg.RemoveExpiredInterval = 50 * time.Millisecond
	c, err := New(cfg, store, NewProducerIDManager(1, (&pidBlocks{}).claim), mk, purgatory.RealClock(), quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ids := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	for p := int32(0); p < cfg.NumPartitions; p++ {
		c.OnBecomeLeader(p, 1)
	}

	type committed struct {
		pid   int64
		epoch int16
		parts []common.TopicPartition
	}
	var mu sync.Mutex
	var commits []committed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	retriable := func(code int16) bool {
		switch code {
		case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.ConcurrentTransactions.Code,
			kerr.CoordinatorNotAvailable.Code:
			return true
		}
		return false
	}
	for i, id := range ids {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			var pid int64
			var epoch int16
			initialized := false
			for n := 0; n < 40; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if !initialized {
					r := c.InitProducerID(ctx, &kmsg.InitProducerIDRequest{Version: 4, TransactionalID: ptr(id),
						TransactionTimeoutMillis: 60000, ProducerID: -1, ProducerEpoch: -1})
					if r.ErrorCode != 0 {
						time.Sleep(time.Millisecond)
						continue
					}
					pid, epoch, initialized = r.ProducerID, r.ProducerEpoch, true
				}
				parts := []common.TopicPartition{{Topic: "t", Partition: int32(n % 3)}, {Topic: fmt.Sprint("u", i), Partition: 0}}
				req := &kmsg.AddPartitionsToTxnRequest{Version: 3, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch}
				for _, tp := range parts {
					req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
				}
				code := c.AddPartitionsToTxn(ctx, req).Topics[0].Partitions[0].ErrorCode
				for retriable(code) {
					time.Sleep(time.Millisecond)
					code = c.AddPartitionsToTxn(ctx, req).Topics[0].Partitions[0].ErrorCode
				}
				if code != 0 {
					initialized = false
					continue
				}
				end := &kmsg.EndTxnRequest{Version: 3, TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Commit: true}
				code = c.EndTxn(ctx, end).ErrorCode
				for retriable(code) && code != kerr.ConcurrentTransactions.Code {
					time.Sleep(time.Millisecond)
					code = c.EndTxn(ctx, end).ErrorCode
				}
				if code == kerr.ConcurrentTransactions.Code {
					// A retry of a commit still completing: it was written.
					code = 0
				}
				if code != 0 {
					initialized = false
					continue
				}
				mu.Lock()
				commits = append(commits, committed{pid: pid, epoch: epoch, parts: parts})
				mu.Unlock()
			}
		}(i, id)
	}
	// The chaos: partitions move away and back, markers fail now and then.
	wg.Add(1)
	go func() {
		defer wg.Done()
		epoch := int32(1)
		for round := 0; round < 30; round++ {
			time.Sleep(5 * time.Millisecond)
			p := int32(round) % cfg.NumPartitions
			epoch++
			c.OnResign(p, epoch)
			mk.mu.Lock()
			mk.errs[common.TopicPartition{Topic: "t", Partition: int32(round % 3)}] = []int16{kerr.NotLeaderForPartition.Code}
			mk.mu.Unlock()
			time.Sleep(time.Millisecond)
			c.OnBecomeLeader(p, epoch)
		}
	}()
	wg.Wait()
	close(stop)

	// Everything settles: no transaction stays in PrepareCommit/PrepareAbort.
	deadline := time.Now().Add(20 * time.Second)
	for {
		pending := 0
		for _, id := range ids {
			d := c.DescribeTransactions(ctx, &kmsg.DescribeTransactionsRequest{TransactionalIDs: []string{id}})
			if st := d.TransactionStates[0]; st.ErrorCode != 0 || st.State == "PrepareCommit" || st.State == "PrepareAbort" {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions still completing", pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(commits) == 0 {
		t.Fatal("no transaction committed")
	}
	// Each committed (pid, epoch) transaction put a COMMIT marker with its
	// pid/epoch on each of its partitions; count per partition.
	need := map[string]int{}
	for _, cm := range commits {
		for _, tp := range cm.parts {
			need[fmt.Sprintf("%s COMMIT pid=%d epoch=%d", tp, cm.pid, cm.epoch)]++
		}
	}
	got := map[string]int{}
	mk.mu.Lock()
	for tp, ms := range mk.received {
		for _, m := range ms {
			var pid, epoch, ce int64
			var kind string
			if _, err := fmt.Sscanf(m, "%s pid=%d epoch=%d ce=%d", &kind, &pid, &epoch, &ce); err != nil {
				t.Fatal(err)
			}
			got[fmt.Sprintf("%s %s pid=%d epoch=%d", tp, kind, pid, epoch)]++
		}
	}
	mk.mu.Unlock()
	for k, n := range need {
		if got[k] < n {
			t.Errorf("%s: %d markers, want at least %d", k, got[k], n)
		}
	}
	c.Close()
	if n := c.busy.Load(); n != 0 {
		t.Errorf("busy=%d after Close", n)
	}
}
