package storage

import (
	"fmt"
	"testing"
)

func TestOffsetMapPutGet(t *testing.T) {
	m := NewOffsetMap(24 * 1000)
	if m.Slots() != 1000 {
		t.Fatalf("slots %d", m.Slots())
	}
	for i := 0; i < 900; i++ {
		if err := m.Put([]byte(fmt.Sprintf("key-%d", i)), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Later offsets overwrite; the size counts distinct keys.
	for i := 0; i < 100; i++ {
		if err := m.Put([]byte(fmt.Sprintf("key-%d", i)), int64(1000+i)); err != nil {
			t.Fatal(err)
		}
	}
	if m.Size() != 900 || m.LatestOffset() != 1099 {
		t.Fatalf("size %d latest %d", m.Size(), m.LatestOffset())
	}
	for i := 0; i < 900; i++ {
		want := int64(i)
		if i < 100 {
			want = int64(1000 + i)
		}
		if got := m.Get([]byte(fmt.Sprintf("key-%d", i))); got != want {
			t.Fatalf("key-%d: %d want %d", i, got, want)
		}
	}
	if m.Get([]byte("absent")) != -1 {
		t.Fatal("absent key found")
	}
	// A completely full map still answers and refuses new keys.
	small := NewOffsetMap(24 * 3)
	for i := 0; i < 3; i++ {
		if err := small.Put([]byte{byte(i)}, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := small.Put([]byte("x"), 9); err == nil {
		t.Fatal("full map accepted a new key")
	}
	if small.Get([]byte{2}) != 2 || small.Get([]byte("x")) != -1 {
		t.Fatal("full map lookups")
	}
	m.Clear()
	if m.Size() != 0 || m.Get([]byte("key-1")) != -1 || m.LatestOffset() != -1 {
		t.Fatal("clear")
	}
}

// FuzzOffsetMap: for any keys, after putting (key, i) for each in order,
// Get returns the last i for every key, and Size never exceeds Slots.
func FuzzOffsetMap(f *testing.F) {
	f.Add([]byte("a,b,a,c"), 7)
	f.Add([]byte(""), 1)
	f.Fuzz(func(t *testing.T, data []byte, slots int) {
		if slots < 1 || slots > 64 {
			slots = 16
		}
		m := NewOffsetMap(slots * offsetMapEntrySize)
		want := map[string]int64{}
		for i := 0; i+2 <= len(data); i += 2 {
			k := data[i : i+2]
			if err := m.Put(k, int64(i)); err != nil {
				if len(want) < slots {
					t.Fatalf("full with %d of %d slots", len(want), slots)
				}
				continue
			}
			want[string(k)] = int64(i)
		}
		for k, v := range want {
			if got := m.Get([]byte(k)); got != v {
				t.Fatalf("%x: %d want %d", k, got, v)
			}
		}
		if m.Size() > m.Slots() {
			t.Fatal("size above capacity")
		}
	})
}
