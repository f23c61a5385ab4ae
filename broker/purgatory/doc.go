// Package purgatory holds requests that cannot be answered yet (Kafka's
// DelayedOperationPurgatory): acks=all produce waiting for replication,
// fetches waiting for fetch.min.bytes or fetch.max.wait.ms, group joins and
// heartbeats waiting for members or session timeouts.
//
// Kafka classes → files:
//
//	kafka.server.DelayedOperation           purgatory.go (Operation, entry)
//	kafka.server.DelayedOperationPurgatory  purgatory.go (Purgatory)
//	kafka.utils.timer.Timer / SystemTimer   clock.go (Clock, RealClock, FakeClock)
//	TopicPartitionOperationKey, GroupKey …  keys.go
//
// Contract, as in Kafka:
//
//	TryCompleteElseWatch(op, timeout, keys…):
//	    TryComplete → done
//	    else watch op under every key, TryComplete again → done
//	    else arm the timeout
//	CheckAndComplete(key): TryComplete every op watched under key
//	timeout:               OnComplete, then OnExpiration
//
// Every operation completes exactly once: completion is a compare-and-swap
// on the entry's atomic state, and only the winner unregisters it and runs
// OnComplete. Calls of TryComplete for one operation are serialized by a
// per-operation mutex (Kafka's DelayedOperation lock), so a TryComplete
// that sees the condition met completes the operation before any other
// checker can look at it.
//
// Locks: Purgatory.mu (watch lists, pending set, timers) is never held
// while calling an Operation method; entry.mu is held across TryComplete
// and the OnComplete that follows it. Lock order: entry.mu → Purgatory.mu.
// Hence TryComplete must not call back into the purgatory (it would take
// other entries' locks while holding its own). Kafka lets a DelayedJoin
// share the group's (reentrant) lock; Go mutexes are not reentrant, so a
// caller must not hold a lock that TryComplete takes (a group lock, say)
// while calling CheckAndComplete or TryCompleteElseWatch: release it
// first, then check.
//
// Reuse: the purgatory allocates nothing per operation in steady state.
// An operation that completes on its first try needs no entry; the others
// take an entry (with its watch nodes and its timer, which is reset, not
// remade) from a pool and return it once complete. A use of an entry is a
// generation, recorded in its state; whatever may hold an entry past that
// use (snapshots taken by CheckAndComplete and Shutdown, a timer callback
// that had started when the operation completed otherwise) acts only on
// its own generation (entry's comment has the rules). Operations that
// implement Releaser learn when the purgatory is through with them, and
// may then be reused by their owner.
//
// Completed operations are removed from all their watch lists at once
// (Kafka purges them lazily; eager removal keeps Watched exact and needs no
// purge thread).
//
// Goroutines: none of its own. Timeouts run through Clock.AfterFunc, one
// timer per entry reset for each use (a runtime timer goroutine with
// RealClock; the goroutine calling FakeClock.Advance in tests). Shutdown stops accepting timeouts, expires
// every pending operation and waits for timeout callbacks in progress.
package purgatory
