package network

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fileRange is a test FileRecords over a region of a real file. Writing to
// a *net.TCPConn goes through io.Copy → TCPConn.ReadFrom with an
// io.LimitedReader over *os.File, which is Go's sendfile path.
type fileRange struct {
	mu       *sync.Mutex // the file offset is shared
	f        *os.File
	off, n   int64
	tcpSends *atomic.Int32
}

func (r fileRange) Len() int { return int(r.n) }

func (r fileRange) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := w.(*net.TCPConn); ok && r.tcpSends != nil {
		r.tcpSends.Add(1)
	}
	if _, err := r.f.Seek(r.off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, io.LimitReader(r.f, r.n))
}

// makeBatch builds a valid magic-2 record batch of values starting at
// base, with a correct CRC-32C.
func makeBatch(base int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		enc := r.AppendTo(nil)[1:] // drop the zero length varint
		recs = binary.AppendVarint(recs, int64(len(enc)))
		recs = append(recs, enc...)
	}
	b := kmsg.RecordBatch{
		FirstOffset: base, Magic: 2, LastOffsetDelta: int32(len(values) - 1),
		FirstTimestamp: 1700000000000, MaxTimestamp: 1700000000000,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(values)), Records: recs,
	}
	enc := b.AppendTo(nil)
	binary.BigEndian.PutUint32(enc[8:], uint32(len(enc)-12))
	crc := crc32.Checksum(enc[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(enc[17:], crc)
	return enc
}

func writeTempFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// testFetchResponse is a version-v fetch response for topic-0 and topic-1
// with partitions 0 and 1 each, every partition filled in by fill (in topic,
// then partition order).
func testFetchResponse(v int16, fill func(ti, pi int, p *kmsg.FetchResponseTopicPartition)) *kmsg.FetchResponse {
	resp := (&kmsg.FetchRequest{Version: v}).ResponseKind().(*kmsg.FetchResponse)
	for ti := 0; ti < 2; ti++ {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = fmt.Sprintf("topic-%d", ti)
		for pi := 0; pi < 2; pi++ {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(pi)
			fill(ti, pi, &p)
			rt.Partitions = append(rt.Partitions, p)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// A spliced response is byte-identical to the same response encoded with
// the file bytes inline, for classic and flexible versions, for empty
// files and for lengths whose uvarint prefix is longer than the
// placeholder's.
func TestSplicerMatchesInlineEncoding(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 40) // 640 bytes
	f := writeTempFile(t, data)
	var mu sync.Mutex
	for _, v := range []int16{4, 11, 12, 13} {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			ranges := []fileRange{
				{mu: &mu, f: f, off: 0, n: 300},
				{mu: &mu, f: f, off: 300, n: 0},
				{mu: &mu, f: f, off: 310, n: 5},
				{mu: &mu, f: f, off: 0, n: 640},
			}
			build := func(recs func(i int) []byte) *kmsg.FetchResponse {
				resp := testFetchResponse(v, func(ti, pi int, p *kmsg.FetchResponseTopicPartition) {
					p.HighWatermark = 42
					p.RecordBatches = recs(ti*2 + pi)
				})
				for i := range resp.Topics {
					// an in-memory partition alongside
					p := kmsg.NewFetchResponseTopicPartition()
					p.Partition = 9
					p.RecordBatches = []byte("in-memory")
					resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
				}
				return resp
			}
			inline := build(func(i int) []byte {
				r := ranges[i]
				return append([]byte{}, data[r.off:r.off+r.n]...)
			}).AppendTo(nil)

			var sp splicer
			out, err := sp.Finish(build(func(i int) []byte { return sp.Placeholder(ranges[i]) }))
			if err != nil {
				t.Fatal(err)
			}
			s, ok := out.(*SplicedResponse)
			if !ok {
				t.Fatalf("Finish returned %T", out)
			}
			got := s.AppendTo(nil)
			if !bytes.Equal(got, inline) {
				t.Fatalf("spliced encoding differs from inline\n got %x\nwant %x", got, inline)
			}
			if s.BodyLen() != len(inline) {
				t.Fatalf("BodyLen %d, want %d", s.BodyLen(), len(inline))
			}
			files := 0
			for _, p := range s.Pieces() {
				if p.File != nil {
					files++
				}
			}
			if files != 3 { // the empty range needs no piece
				t.Fatalf("%d file pieces, want 3", files)
			}
		})
	}
}

func TestSplicerErrors(t *testing.T) {
	var sp splicer
	resp := (&kmsg.FetchRequest{Version: 12}).ResponseKind()
	if out, err := sp.Finish(resp); err != nil || out != resp {
		t.Fatalf("no placeholders: %v %v", out, err)
	}
	sp.Placeholder(fileRange{n: 1})
	if _, err := sp.Finish(resp); !errors.Is(err, ErrSplice) {
		t.Fatalf("unused placeholder: %v", err)
	}
	// A placeholder embedded in a larger byte field is not a records field.
	var sp2 splicer
	fr := resp.(*kmsg.FetchResponse)
	rt := kmsg.NewFetchResponseTopic()
	p := kmsg.NewFetchResponseTopicPartition()
	p.RecordBatches = append([]byte("x"), sp2.Placeholder(fileRange{n: 1})...)
	rt.Partitions = append(rt.Partitions, p)
	fr.Topics = append(fr.Topics, rt)
	if _, err := sp2.Finish(fr); !errors.Is(err, ErrSplice) {
		t.Fatalf("embedded placeholder: %v", err)
	}
}

// kgo consumes records that the server sends straight from a file through
// the connection (sendfile path), over real TCP.
func TestSplicedFetchWithKgo(t *testing.T) {
	var log []byte
	var positions []int64
	for i := 0; i < 5; i++ {
		positions = append(positions, int64(len(log)))
		var vals []string
		for j := 0; j < 3; j++ {
			vals = append(vals, fmt.Sprintf("value-%d", i*3+j))
		}
		log = append(log, makeBatch(int64(i*3), vals...)...)
	}
	positions = append(positions, int64(len(log)))
	f := writeTempFile(t, log)
	var fmu sync.Mutex
	var tcpSends atomic.Int32
	const hw = 15

	var srv *Server
	versions := map[int16][2]int16{1: {4, 12}, 3: {0, 12}, 18: {0, 3}}
	h := handlerFunc{versions: versions, fn: func(ctx context.Context, req *Request) (kmsg.Response, error) {
		switch body := req.Body.(type) {
		case *kmsg.MetadataRequest:
			resp := body.ResponseKind().(*kmsg.MetadataResponse)
			host, port, _ := net.SplitHostPort(srv.BoundAddr("PLAINTEXT").String())
			p, _ := strconv.Atoi(port)
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = 0, host, int32(p)
			resp.Brokers = []kmsg.MetadataResponseBroker{b}
			resp.ControllerID = 0
			rt := kmsg.NewMetadataResponseTopic()
			rt.Topic = kmsg.StringPtr("t")
			rp := kmsg.NewMetadataResponseTopicPartition()
			rp.Leader, rp.LeaderEpoch, rp.Replicas, rp.ISR = 0, 0, []int32{0}, []int32{0}
			rt.Partitions = []kmsg.MetadataResponseTopicPartition{rp}
			resp.Topics = []kmsg.MetadataResponseTopic{rt}
			return resp, nil
		case *kmsg.FetchRequest:
			resp := body.ResponseKind().(*kmsg.FetchResponse)
			var sp splicer
			data := false
			for _, t := range body.Topics {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewFetchResponseTopicPartition()
					rp.Partition = p.Partition
					rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, hw, 0
					rp.RecordBatches = []byte{}
					if p.FetchOffset < hw {
						// send from the batch holding FetchOffset to the end
						start := positions[p.FetchOffset/3]
						rp.RecordBatches = sp.Placeholder(fileRange{mu: &fmu, f: f, off: start, n: int64(len(log)) - start, tcpSends: &tcpSends})
						data = true
					}
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			if !data {
				// long poll stand-in: wait a little or until closed
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
			return sp.Finish(resp)
		}
		return nil, errors.New("unexpected request")
	}}
	srv = startServer(t, Config{}, h)

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addrOf(srv)),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().At(4)}}),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var got []string
	for len(got) < 11 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("timed out with %d records: %v", len(got), got)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch error %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if want := fmt.Sprintf("value-%d", r.Offset); string(r.Value) != want {
				t.Errorf("offset %d value %q, want %q", r.Offset, r.Value, want)
			}
			got = append(got, string(r.Value))
		})
	}
	if len(got) != 11 || got[0] != "value-4" || got[10] != "value-14" {
		t.Fatalf("records %v", got)
	}
	if tcpSends.Load() == 0 {
		t.Fatal("file records were never written to the *net.TCPConn directly")
	}
}

// A FileFetchResponse built by the replica manager (records left empty,
// files attached by position) frames to the same bytes as the inline
// encoding, and leaves its records fields empty afterwards.
func TestFileFetchResponseFramesLikeInline(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 40)
	f := writeTempFile(t, data)
	var mu sync.Mutex
	build := func(recs func(ti, pi int) []byte) *kmsg.FetchResponse {
		return testFetchResponse(12, func(ti, pi int, p *kmsg.FetchResponseTopicPartition) { p.RecordBatches = recs(ti, pi) })
	}
	rng := func(ti, pi int) fileRange {
		return fileRange{mu: &mu, f: f, off: int64(100*ti + 10*pi), n: int64(50 + ti + pi)}
	}
	inline := build(func(ti, pi int) []byte {
		if ti == 1 && pi == 0 {
			return []byte("in-memory")
		}
		r := rng(ti, pi)
		return append([]byte{}, data[r.off:r.off+r.n]...)
	}).AppendTo(nil)

	resp := build(func(ti, pi int) []byte {
		if ti == 1 && pi == 0 {
			return []byte("in-memory")
		}
		return []byte{}
	})
	fr := NewFileFetchResponse(resp)
	for _, at := range [][2]int{{0, 0}, {0, 1}, {1, 1}} {
		fr.SetFileRecords(at[0], at[1], rng(at[0], at[1]))
	}
	out, err := fr.frame()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := out.(*SplicedResponse)
	if !ok {
		t.Fatalf("frame returned %T", out)
	}
	if got := s.AppendTo(nil); !bytes.Equal(got, inline) {
		t.Fatalf("framed encoding differs from inline\n got %x\nwant %x", got, inline)
	}
	if got := fr.AppendTo(nil); !bytes.Equal(got, inline) {
		t.Fatalf("AppendTo differs from inline")
	}
	if len(resp.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("records field keeps %q after framing", resp.Topics[0].Partitions[0].RecordBatches)
	}
}
