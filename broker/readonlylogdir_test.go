package broker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/common"
	"github.com/klassik/klassik/broker/testcluster"
	"github.com/klassik/klassik/zkpaths"
)

// ext4Dir is a small ext4 file system on a loop device mounted at dir
// with errors=remount-ro, the setting that turns a disk error into a file
// system gone read-only under the process.
type ext4Dir struct {
	t         *testing.T
	img, dir  string
	loop      string
	unmounted bool
}

// mountExt4 makes a 32 MiB ext4 image, attaches it to a loop device and
// mounts it at dir (root and mkfs.ext4/losetup needed: the test fails,
// never skips, without them); it is unmounted and detached when the test
// ends.
func mountExt4(t *testing.T, dir string) *ext4Dir {
	t.Helper()
	e := &ext4Dir{t: t, img: filepath.Join(t.TempDir(), "ext4.img"), dir: dir}
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("this test builds an ext4 file system on a loop device and needs root, mkfs.ext4 and losetup: %s %v: %v: %s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.WriteFile(e.img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(e.img, 32<<20); err != nil {
		t.Fatal(err)
	}
	run("mkfs.ext4", "-q", "-F", e.img)
	e.loop = run("losetup", "-f", "--show", e.img)
	t.Cleanup(func() {
		if !e.unmounted {
			exec.Command("umount", "-l", e.dir).Run()
		}
		// A device still held (a lazily unmounted file system) is
		// detached when its last user goes.
		exec.Command("losetup", "-d", e.loop).Run()
	})
	e.mount()
	return e
}

func (e *ext4Dir) mount() {
	e.t.Helper()
	if out, err := exec.Command("mount", "-o", "errors=remount-ro", e.loop, e.dir).CombinedOutput(); err != nil {
		e.t.Fatalf("mount %s at %s: %v: %s", e.loop, e.dir, err, out)
	}
	e.unmounted = false
	// A log dir holds only partition directories: Kafka, like Klassik,
	// refuses to start on a "lost+found" in it, so an operator points
	// log.dirs at a subdirectory or removes it (e2fsck makes it again).
	if err := os.Remove(filepath.Join(e.dir, "lost+found")); err != nil {
		e.t.Fatal(err)
	}
}

// fail makes the kernel record an ext4 error on the file system
// (/sys/fs/ext4/<dev>/trigger_fs_error): with errors=remount-ro it goes
// read-only at once, open files and all, and every later write answers
// EROFS — what a disk error does to a real log dir.
func (e *ext4Dir) fail() {
	e.t.Helper()
	p := filepath.Join("/sys/fs/ext4", filepath.Base(e.loop), "trigger_fs_error")
	if err := os.WriteFile(p, []byte("klassik test: log dir disk error\n"), 0o200); err != nil {
		e.t.Fatalf("triggering an ext4 error through %s: %v", p, err)
	}
}

// repair is the operator's fix: unmount, fsck, mount again.
func (e *ext4Dir) repair() {
	e.t.Helper()
	if out, err := exec.Command("umount", e.dir).CombinedOutput(); err != nil {
		e.t.Fatalf("umount %s: %v: %s", e.dir, err, out)
	}
	e.unmounted = true
	// e2fsck exits 1 when it fixed something (it clears the error state).
	if out, err := exec.Command("e2fsck", "-f", "-y", e.loop).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			e.t.Fatalf("e2fsck %s: %v: %s", e.loop, err, out)
		}
	}
	e.mount()
}

// TestReadOnlyLogDirGoesOfflineAlone: broker 1's first log dir is an ext4
// file system that goes read-only under it while an idempotent acks=all
// producer writes (errors=remount-ro after a disk error; a plain `mount
// -o remount,ro` is refused while the broker holds files open for
// writing, so the kernel's own emergency read-only path is used).
// Invariant: the append that gets EROFS takes that directory offline
// alone — the log dir event notification is written and processed, the
// partition there gets broker 2 as its new leader and loses broker 1 from
// its ISR, broker 1 answers KAFKA_STORAGE_ERROR for it and keeps leading
// and taking writes for the topic in its other directory — the producer
// goes on through the new leader, no acknowledged record is lost (checked
// by partition and offset), and after the file system is repaired
// (unmount, e2fsck, mount) a restart brings the directory back, broker 1
// catches up and its replica is byte-identical to the new leader's.
func TestReadOnlyLogDirGoesOfflineAlone(t *testing.T) {
	const ro, other = "goes-read-only", "stays-writable"
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, LogDirs: 2, Overrides: replicationOverrides})
	victim := 0
	vid := c.BrokerID(victim)
	roDir := c.LogDirs(victim)[0]
	c.StopBroker(victim)
	fsys := mountExt4(t, roDir)
	t.Cleanup(func() { c.StopBroker(victim) }) // before the file system goes (cleanups run last-in first-out)
	c.RestartBroker(victim)
	ctx := ctxT(t, 120*time.Second)
	cfg := map[string]string{"min.insync.replicas": "1"}
	for _, topic := range []string{ro, other} {
		ct := request[*kmsg.CreateTopicsResponse](ctx, t, c.Client(), assignedTopicRequest(topic, 10000, [][]int32{{1, 2}}, cfg))
		if err := kerr.ErrorForCode(ct.Topics[0].ErrorCode); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		c.WaitFor(30*time.Second, topic+" led by broker 1 with a full ISR", func() bool {
			st, ok := c.PartitionState(topic, 0)
			_, hosted := c.Broker(victim).LogManager().GetLog(common.TopicPartition{Topic: topic, Partition: 0})
			return ok && st.Leader == vid && len(st.ISR) == 2 && hosted
		})
	}
	lm := c.Broker(victim).LogManager()
	if d, _ := lm.LogDirOf(common.TopicPartition{Topic: ro, Partition: 0}); d != roDir {
		t.Fatalf("%s placed in %s, want the ext4 dir %s", ro, d, roDir)
	}

	chk := testcluster.NewChecker()
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(60*time.Second))
	var acked, failed atomic.Int64
	var wg sync.WaitGroup
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // the producer; ends on stop, joined through done
		defer close(done)
		for seq := 0; ; seq++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			id := "ro-" + strconv.Itoa(seq)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: ro, Value: []byte(id)}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.Add(1)
					return
				}
				acked.Add(1)
				chk.Acked(id, int64(seq), r.Partition, r.Offset)
			})
		}
	}()
	stopProducer := sync.OnceFunc(func() { close(stop); <-done; wg.Wait() })
	defer stopProducer()
	c.WaitFor(30*time.Second, "200 records acknowledged before the disk error", func() bool { return acked.Load() >= 200 })

	_, before, err := c.ZK().Exists(zkpaths.LogDirEventNotificationPath)
	if err != nil {
		t.Fatal(err)
	}
	fsys.fail()
	faulted := time.Now()
	c.WaitFor(30*time.Second, "the read-only dir offline", func() bool { return lm.IsOffline(roDir) })
	if off := lm.OfflineDirs(); len(off) != 1 || off[0] != roDir {
		t.Fatalf("offline dirs %v, want only %s", off, roDir)
	}
	c.WaitFor(30*time.Second, "broker 2 leading "+ro+", broker 1 out of its ISR", func() bool {
		st, ok := c.PartitionState(ro, 0)
		return ok && st.Leader == c.BrokerID(1) && !slices.Contains(st.ISR, vid)
	})
	t.Logf("leader moved %v after the file system went read-only", time.Since(faulted).Round(time.Millisecond))
	c.WaitFor(20*time.Second, "the log dir event notification written and processed", func() bool {
		_, st, err := c.ZK().Exists(zkpaths.LogDirEventNotificationPath)
		return err == nil && st.Cversion >= before.Cversion+2 && st.NumChildren == 0
	})
	if st, _ := c.PartitionState(other, 0); st.Leader != vid || len(st.ISR) != 2 {
		t.Errorf("%s (healthy dir): leader %d ISR %v, want broker %d to keep it with a full ISR", other, st.Leader, st.ISR, vid)
	}
	if code := producePartitionCode(ctx, t, c.Direct(victim), common.TopicPartition{Topic: other, Partition: 0}, -1); code != 0 {
		t.Errorf("produce to %s (healthy dir) at broker 1: %v", other, kerr.ErrorForCode(code))
	}
	if code := producePartitionCode(ctx, t, c.Direct(victim), common.TopicPartition{Topic: ro, Partition: 0}, -1); code != kerr.KafkaStorageError.Code {
		t.Errorf("produce to %s at broker 1: %v, want KAFKA_STORAGE_ERROR", ro, kerr.ErrorForCode(code))
	}
	target := acked.Load() + 200
	c.WaitFor(60*time.Second, "200 more records acknowledged by the new leader", func() bool { return acked.Load() >= target })
	stopProducer()
	t.Logf("acknowledged %d, failed %d", acked.Load(), failed.Load())
	consumeAllTracked(t, c, chk, ro, int(acked.Load()))
	if rep := chk.Report(); !rep.OK() {
		t.Fatalf("delivery check failed:\n%s", rep)
	}

	// The fix, then a restart: the directory and its log come back.
	c.StopBroker(victim)
	fsys.repair()
	c.RestartBroker(victim)
	if off := c.Broker(victim).LogManager().OfflineDirs(); len(off) != 0 {
		t.Fatalf("offline after the repair: %v", off)
	}
	if d, ok := c.Broker(victim).LogManager().LogDirOf(common.TopicPartition{Topic: ro, Partition: 0}); !ok || d != roDir {
		t.Fatalf("%s after the repair: in %q (%v), want %s", ro, d, ok, roDir)
	}
	c.WaitFor(40*time.Second, "broker 1 back in the ISR of "+ro, func() bool {
		st, ok := c.PartitionState(ro, 0)
		return ok && slices.Contains(st.ISR, vid)
	})
	waitIdenticalReplicas(t, c, ro, 0, 1)
}
