package authorizer

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

// notificationPurgeAge is how old a change notification must be before a
// broker deletes it (ZkNodeChangeNotificationListener's changeExpirationMs:
// 15 minutes).
const notificationPurgeAge = 15 * time.Minute

// changeListener is Kafka's ZkNodeChangeNotificationListener for one ACL
// change folder: one goroutine, woken by the children watch and by every
// new ZooKeeper session, handles each acl_changes_ child above the last
// one it handled, in sequence order, then deletes the children older than
// 15 minutes. A notification that cannot be handled is logged and skipped
// (as Kafka does); a ZooKeeper error ends the pass, and the next wake-up
// starts again after the last handled child.
type changeListener struct {
	zk     *zkclient.Client
	path   string
	handle func(data []byte) error
	now    func() time.Time
	logger *slog.Logger

	wake    chan struct{} // capacity 1: wake-ups coalesce
	done    chan struct{}
	wg      sync.WaitGroup
	cancels []func()
	once    sync.Once

	lastSeq int64 // owned by the goroutine
}

// errBadNotification marks a notification that can never be handled; it
// is skipped.
var errBadNotification = errors.New("unusable ACL change notification")

func startChangeListener(c *zkclient.Client, path string, handle func([]byte) error, now func() time.Time, logger *slog.Logger) *changeListener {
	l := &changeListener{zk: c, path: path, handle: handle, now: now, logger: logger.With("changes", path),
		wake: make(chan struct{}, 1), done: make(chan struct{}), lastSeq: -1}
	l.cancels = append(l.cancels, c.WatchChildren(path, l.poke), c.OnNewSession(l.poke))
	l.wg.Add(1)
	go l.run()
	l.poke()
	return l
}

// poke only enqueues: watch callbacks must stay cheap.
func (l *changeListener) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *changeListener) stop() {
	l.once.Do(func() {
		for _, c := range l.cancels {
			c()
		}
		close(l.done)
	})
	l.wg.Wait()
}

func (l *changeListener) run() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.wake:
			if err := l.process(); err != nil && !errors.Is(err, zkclient.ErrClosed) {
				l.logger.Warn("processing ACL change notifications failed; will retry on the next change", "err", err)
			}
		}
	}
}

func (l *changeListener) process() error {
	kids, err := l.zk.Children(l.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	now := l.now()
	for _, name := range kids { // sorted by Children
		seq, err := zkpaths.ParseSequenceNumber(name, zkpaths.ACLChangePrefix)
		if err != nil || seq <= l.lastSeq {
			continue
		}
		data, _, err := l.zk.Get(l.path + "/" + name)
		if errors.Is(err, zk.ErrNoNode) {
			l.lastSeq = seq
			continue
		}
		if err != nil {
			return err
		}
		if err := l.handle(data); err != nil {
			if !errors.Is(err, errBadNotification) {
				return err // ZooKeeper trouble: handle this child again next time
			}
			l.logger.Error("error processing ACL change notification", "notification", name, "data", string(data), "err", err)
		}
		l.lastSeq = seq
	}
	for _, name := range kids {
		p := l.path + "/" + name
		_, st, err := l.zk.Get(p)
		if err != nil {
			continue
		}
		if now.Sub(time.UnixMilli(st.Ctime)) > notificationPurgeAge {
			if err := l.zk.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				l.logger.Debug("purging an old ACL change notification failed", "path", p, "err", err)
			}
		}
	}
	return nil
}
