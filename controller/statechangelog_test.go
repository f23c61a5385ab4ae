package controller

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/klassik/klassik/broker/loglevels"
)

// lockedBuffer is a bytes.Buffer safe for the controller's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Kafka's state-change logger levels: a transition that writes a new
// leadership (a new partition's first leader, an election) is logged at
// INFO with the new state; the other partition and replica transitions are
// TRACE lines, which an INFO logger never formats.
func TestStateChangeLogLevels(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, loglevels.LevelTrace} {
		t.Run(level.String(), func(t *testing.T) {
			out := &lockedBuffer{}
			h := newHarness(t)
			h.cfg = func(c *Config) {
				c.StateChangeLogger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
			}
			for _, step := range [][]string{
				{"broker-up", "1", "2"}, {"start", "1"}, {"create-topic", "t", "0:1,2"}, {"broker-down", "1"},
			} {
				if _, err := h.run(step[0], step[1:]); err != nil {
					t.Fatalf("%v: %v", step, err)
				}
			}
			log := out.String()
			for _, want := range []string{
				"Changed partition t-0 from NewPartition to OnlinePartition with state",
				"Changed partition t-0 from OfflinePartition to OnlinePartition with state",
			} {
				if !strings.Contains(log, want) {
					t.Errorf("state-change log lacks %q:\n%s", want, log)
				}
			}
			traced := strings.Contains(log, "Changed state of replica") && strings.Contains(log, "Changed partition t-0 state from")
			if traced != (level == loglevels.LevelTrace) {
				t.Errorf("at level %v, TRACE transitions logged = %v:\n%s", level, traced, log)
			}
		})
	}
}
