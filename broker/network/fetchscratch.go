package network

import "github.com/twmb/franz-go/pkg/kmsg"

// keptFetchPartitionsMax bounds the partitions a connection's kept Fetch
// response and its owner's slices keep room for between requests (a
// follower fetching every partition it follows stays within it on a
// broker of 10,000 replicas); a larger fetch gets fresh memory that is
// dropped afterwards.
const keptFetchPartitionsMax = 1 << 14

// FetchScratch is what a connection keeps for its Fetch requests, so that
// answering one allocates nothing per partition: the response, its file
// list, and Slot, where the replica manager keeps its own per-request
// slices (a Slot with a ReleaseReads method has it called once the answer
// is written). It is valid from the handler's call until the response has
// been written: a connection handles a Fetch only when no response is queued
// and writes its answer before it reads the next request (pipeline.go), so
// whoever is handed it may keep nothing of it beyond that.
type FetchScratch struct {
	resp  kmsg.FetchResponse
	files FileFetchResponse
	// Slot belongs to the Fetch handler; the connection never looks at it.
	Slot any
}

// written drops what the answer just written referenced — records read
// into memory, file ranges, and through the Slot's ReleaseReads the
// owner's reads — so that a connection that stops fetching pins none of
// it; the memory itself stays for the next Fetch.
func (s *FetchScratch) written() {
	for i := range s.resp.Topics {
		clear(s.resp.Topics[i].Partitions)
	}
	clear(s.files.files)
	if r, ok := s.Slot.(interface{ ReleaseReads() }); ok {
		r.ReleaseReads()
	}
}

// KeptFetch returns the connection's FetchScratch, or nil when r is not a
// connection's Fetch.
func (r *Request) KeptFetch() *FetchScratch {
	if r.scratch == nil || r.Key != int16(kmsg.Fetch) {
		return nil
	}
	return &r.scratch.fetchKept
}

// Response returns the kept FetchResponse, reset for version, and, with
// files, a FileFetchResponse over it (nil without). The earlier responses'
// topic and partition slices keep their capacity, emptied, for
// AppendTopic; nothing of an earlier response stays reachable.
func (s *FetchScratch) Response(version int16, files bool) (*kmsg.FetchResponse, *FileFetchResponse) {
	topics := s.resp.Topics[:cap(s.resp.Topics)] // the places beyond len too
	kept := 0
	for i := range topics {
		clear(topics[i].Partitions)
		topics[i].Partitions = topics[i].Partitions[:0]
		kept += cap(topics[i].Partitions)
	}
	if kept > keptFetchPartitionsMax || cap(topics) > keptFetchPartitionsMax {
		topics = nil
	}
	s.resp = kmsg.FetchResponse{Version: version, Topics: topics[:0]}
	clear(s.files.files)
	if cap(s.files.files) > keptFetchPartitionsMax {
		s.files.files = nil
	}
	s.files = FileFetchResponse{FetchResponse: &s.resp, files: s.files.files[:0]}
	if !files {
		return &s.resp, nil
	}
	return &s.resp, &s.files
}

// AppendFetchTopic appends an empty topic to resp with room for n
// partitions and returns it, reusing the partition slice an earlier
// response left in that place (see FetchScratch.Response).
func AppendFetchTopic(resp *kmsg.FetchResponse, n int) *kmsg.FetchResponseTopic {
	i := len(resp.Topics)
	var parts []kmsg.FetchResponseTopicPartition
	if i < cap(resp.Topics) {
		resp.Topics = resp.Topics[:i+1]
		parts = resp.Topics[i].Partitions[:0]
		resp.Topics[i] = kmsg.NewFetchResponseTopic()
	} else {
		resp.Topics = append(resp.Topics, kmsg.NewFetchResponseTopic())
	}
	if cap(parts) < n {
		parts = make([]kmsg.FetchResponseTopicPartition, 0, n)
	}
	t := &resp.Topics[i]
	t.Partitions = parts
	return t
}
