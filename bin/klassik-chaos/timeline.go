package main

// The timeline: what the tool did (faults, heals, restarts), what the
// clients saw (rebalances, failed sends, each partition's longest stall of
// acknowledged writes) and what the cluster did, read from ZooKeeper
// watches on /controller, /controller_epoch, /brokers/ids and the topic's
// /brokers/topics/<topic>/partitions/<n>/state (zkwatch.go). Printed
// sorted by time, or written as JSON (--timeline-json).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Event is one line of the timeline.
type Event struct {
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // chaos, cluster, producer, consumer
	What   string    `json:"what"`
	// Stall is set on the event that reports a partition's longest stall
	// of acknowledged writes (Time is when it began).
	Stall *Stall `json:"stall,omitempty"`
}

// Timeline collects events; safe for concurrent use.
type Timeline struct {
	mu     sync.Mutex
	events []Event
	start  time.Time
	live   io.Writer // if set, every event is also written here as it comes (--live)
}

// Add records an event now.
func (t *Timeline) Add(source, format string, args ...any) {
	t.add(Event{Time: time.Now(), Source: source, What: fmt.Sprintf(format, args...)})
}

func (t *Timeline) add(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
	if t.live != nil {
		t.printEvent(t.live, e)
	}
}

func (t *Timeline) printEvent(w io.Writer, e Event) {
	fmt.Fprintf(w, "%s +%8.3fs %-8s %s\n", e.Time.UTC().Format("15:04:05.000"), e.Time.Sub(t.start).Seconds(), e.Source, e.What)
}

// Events returns the events sorted by time.
func (t *Timeline) Events() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]Event(nil), t.events...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// Print writes the timeline, one event per line, with the time since the
// start.
func (t *Timeline) Print(w io.Writer) {
	for _, e := range t.Events() {
		t.printEvent(w, e)
	}
}

// WriteJSON writes the timeline as a JSON array to file.
func (t *Timeline) WriteJSON(file string) error {
	data, err := json.MarshalIndent(t.Events(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
