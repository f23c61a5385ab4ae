package scaletest

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klassik/klassik/broker/faulttest"
)

// metaConn sends Metadata requests straight to one broker over a
// connection of its own (dialled again after an error), so what is timed
// is the broker's answer, not a client's routing or decoding.
type metaConn struct {
	addr string
	conn net.Conn
	corr int32
}

// metadataVersion is the highest Metadata version with a non-flexible
// (v0) response header; its answer carries leaders, ISRs and errors.
const metadataVersion = 7

// fetch sends one Metadata request for topics (nil: every topic) and
// returns the raw answer's size, the time from the request's write to the
// answer's last byte, and the decoded answer.
func (m *metaConn) fetch(topics []string) (*kmsg.MetadataResponse, int, time.Duration, error) {
	body, elapsed, err := m.roundTrip(topics)
	if err != nil {
		return nil, 0, 0, err
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = metadataVersion
	if err := resp.ReadFrom(body); err != nil {
		return nil, 0, 0, fmt.Errorf("decoding Metadata from %s: %w", m.addr, err)
	}
	return resp, len(body), elapsed, nil
}

func (m *metaConn) roundTrip(topics []string) ([]byte, time.Duration, error) {
	if m.conn == nil {
		c, err := net.DialTimeout("tcp", m.addr, 5*time.Second)
		if err != nil {
			return nil, 0, err
		}
		m.conn = c
	}
	body, elapsed, err := m.exchange(topics)
	if err != nil {
		m.close()
		return nil, 0, fmt.Errorf("Metadata from %s: %w", m.addr, err)
	}
	return body, elapsed, nil
}

func (m *metaConn) exchange(topics []string) ([]byte, time.Duration, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = metadataVersion
	if topics != nil {
		req.Topics = []kmsg.MetadataRequestTopic{}
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	m.corr++
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("scaletest")).AppendRequest(nil, req, m.corr)
	if err := m.conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if _, err := m.conn.Write(frame); err != nil {
		return nil, 0, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(m.conn, hdr[:]); err != nil {
		return nil, 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 4 || n > 64<<20 {
		return nil, 0, fmt.Errorf("response frame size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(m.conn, body); err != nil {
		return nil, 0, err
	}
	elapsed := time.Since(start)
	if got := int32(binary.BigEndian.Uint32(body)); got != m.corr {
		return nil, 0, fmt.Errorf("correlation id %d, want %d", got, m.corr)
	}
	return body[4:], elapsed, nil
}

func (m *metaConn) close() {
	if m.conn != nil {
		m.conn.Close()
		m.conn = nil
	}
}

// want is what a check of a partition's state demands.
type want struct {
	live      []int32 // the leader is one of these
	fullISR   bool    // the ISR is the whole assignment
	preferred bool    // the leader is the first replica
	notLeader int32   // if > 0, a broker that must lead nothing
}

// checkPartition returns why a partition (leader, isr) with the assigned
// replicas falls short of w, or "" if it does not.
func (w want) checkPartition(leader int32, isr, replicas []int32) string {
	switch {
	case !slices.Contains(w.live, leader):
		return fmt.Sprintf("leader %d not among the live brokers %v", leader, w.live)
	case w.notLeader > 0 && leader == w.notLeader:
		return fmt.Sprintf("still led by %d", leader)
	case w.preferred && leader != replicas[0]:
		return fmt.Sprintf("leader %d, not the preferred %d", leader, replicas[0])
	case w.fullISR && !faulttest.SameSet(isr, replicas):
		return fmt.Sprintf("isr %v, replicas %v", isr, replicas)
	}
	return ""
}

// checkMetadata returns nil if the answer lists every partition of topic
// (0..partitions-1) without error and as w demands, with the replicas of
// assignment.
func checkMetadata(resp *kmsg.MetadataResponse, topic string, assignment map[int32][]int32, w want) error {
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if t.ErrorCode != 0 {
			return fmt.Errorf("%s: error %d", topic, t.ErrorCode)
		}
		if len(t.Partitions) != len(assignment) {
			return fmt.Errorf("%s: %d partitions, want %d", topic, len(t.Partitions), len(assignment))
		}
		for _, p := range t.Partitions {
			replicas, ok := assignment[p.Partition]
			if !ok {
				return fmt.Errorf("%s-%d: not assigned", topic, p.Partition)
			}
			if p.ErrorCode != 0 {
				return fmt.Errorf("%s-%d: error %d", topic, p.Partition, p.ErrorCode)
			}
			if !faulttest.SameSet(p.Replicas, replicas) {
				return fmt.Errorf("%s-%d: replicas %v, want %v", topic, p.Partition, p.Replicas, replicas)
			}
			if why := w.checkPartition(p.Leader, p.ISR, replicas); why != "" {
				return fmt.Errorf("%s-%d: %s", topic, p.Partition, why)
			}
		}
		return nil
	}
	return fmt.Errorf("%s: not in the answer", topic)
}

// footprint is one broker process's memory and descriptors at a moment.
type footprint struct {
	heap       uint64 // live heap after a forced GC (runtime.MemStats.HeapAlloc)
	stack      uint64 // StackInuse
	goroutines int
	fds        int // entries of /proc/<pid>/fd
	maps       int // lines of /proc/<pid>/maps
}

// measure reads the footprint of the broker whose klassik.http.listener
// (with klassik.http.pprof.enable) is httpAddr and whose process is pid.
// The heap profile with gc=1 collects garbage first, so heap is what is
// live.
func measure(httpAddr string, pid int) (footprint, error) {
	var f footprint
	client := &http.Client{Timeout: 30 * time.Second}
	mem, err := get(client, "http://"+httpAddr+"/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(mem, "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			f.heap, err = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "# Stack = "); ok {
			inuse, _, _ := strings.Cut(v, " ")
			f.stack, err = strconv.ParseUint(inuse, 10, 64)
		}
		if err != nil {
			return f, fmt.Errorf("heap profile of %s: %q: %w", httpAddr, line, err)
		}
	}
	if f.heap == 0 {
		return f, fmt.Errorf("heap profile of %s: no HeapAlloc", httpAddr)
	}
	gr, err := get(client, "http://"+httpAddr+"/debug/pprof/goroutine?debug=1")
	if err != nil {
		return f, err
	}
	first, _, _ := strings.Cut(gr, "\n")
	if _, err := fmt.Sscanf(first, "goroutine profile: total %d", &f.goroutines); err != nil {
		return f, fmt.Errorf("goroutine profile of %s: %q: %w", httpAddr, first, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return f, err
	}
	f.fds = len(fds)
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return f, err
	}
	defer maps.Close()
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f.maps++
	}
	return f, sc.Err()
}

func get(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}

// segments counts the segment files (.log) under a broker's log directory.
func segments(logDir string) (int, error) {
	n := 0
	err := filepath.WalkDir(logDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".log") {
			n++
		}
		return nil
	})
	return n, err
}

// logLineTime returns the time= of the first line after offset in a
// broker's output that contains msg.
func logLineTime(output string, offset int64, msg string) (time.Time, bool) {
	data, err := os.ReadFile(output)
	if err != nil || int64(len(data)) < offset {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		if !strings.Contains(line, msg) {
			continue
		}
		v, ok := strings.CutPrefix(line, "time=")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, " ")
		if ts, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return ts, true
		}
	}
	return time.Time{}, false
}

// fileSize is the size of a file (0 if it cannot be read).
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// quantile returns the q-quantile (0..1) of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}
