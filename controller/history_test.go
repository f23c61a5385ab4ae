package controller

import (
	"testing"
	"time"
)

func TestHistoryRingKeepsTheNewest(t *testing.T) {
	h := newHistory(func() int32 { return 7 })
	base := time.Unix(100, 0)
	for i := 0; i < historyEvents+5; i++ {
		h.recordEvent(brokerChangeEvent{}, base, base.Add(time.Duration(i)*time.Millisecond), base.Add(time.Duration(i+1)*time.Millisecond), false)
	}
	evs := h.events.snapshot()
	if len(evs) != historyEvents {
		t.Fatalf("%d events kept, want %d", len(evs), historyEvents)
	}
	if evs[0].QueueMs != 5 || evs[len(evs)-1].QueueMs != historyEvents+4 {
		t.Fatalf("kept queue times %v..%v, want 5..%d (oldest first)", evs[0].QueueMs, evs[len(evs)-1].QueueMs, historyEvents+4)
	}
	if e := evs[0]; e.Name != "BrokerChange" || e.State != "BrokerChange" || e.ProcessMs != 1 || e.Controller != 7 {
		t.Fatalf("event record %+v", e)
	}
	var nilHist *history
	nilHist.recordChange(StateChange{}) // state machines built without a history record nothing
	h.recordChange(StateChange{Kind: "partition", Topic: "t", From: "NewPartition", To: "OnlinePartition"})
	if cs := h.changes.snapshot(); len(cs) != 1 || cs[0].To != "OnlinePartition" {
		t.Fatalf("changes %+v", cs)
	}
}

func TestEventName(t *testing.T) {
	for ev, want := range map[event]string{
		brokerChangeEvent{}:          "BrokerChange",
		isrChangeNotificationEvent{}: "IsrChangeNotification",
		startupEvent{}:               "Startup",
	} {
		if got := eventName(ev); got != want {
			t.Errorf("eventName(%T) = %q, want %q", ev, got, want)
		}
	}
}
