package network

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FileRecords is record data held in a file (storage.FileRecords satisfies
// it). WriteTo must write exactly Len bytes; given a *net.TCPConn it should
// use sendfile so the bytes never pass through user space.
type FileRecords interface {
	Len() int
	WriteTo(w io.Writer) (int64, error)
}

// Piece is one part of an encoded response body: either Bytes or, when File
// is non-nil, the file's records.
type Piece struct {
	Bytes []byte
	File  FileRecords
}

// SplicedResponse is a response whose encoded body is a list of pieces, some
// of them file ranges. The server writes it piece by piece, handing the
// connection itself to FileRecords.WriteTo (zero copy for Fetch). Build one
// with a splicer. AppendTo still works (it reads the files into memory), so
// a SplicedResponse can go anywhere a kmsg.Response can.
type SplicedResponse struct {
	kmsg.Response
	pieces []Piece
	size   int
}

// Pieces returns the encoded body in order.
func (s *SplicedResponse) Pieces() []Piece { return s.pieces }

// BodyLen is the total length of the encoded body.
func (s *SplicedResponse) BodyLen() int { return s.size }

// AppendTo appends the body, copying file data through memory. The server
// does not use it; it exists for tests and for wrappers that need bytes.
func (s *SplicedResponse) AppendTo(dst []byte) []byte {
	for _, p := range s.pieces {
		if p.File == nil {
			dst = append(dst, p.Bytes...)
			continue
		}
		var b bytes.Buffer
		if _, err := p.File.WriteTo(&b); err != nil {
			// AppendTo cannot fail; a short read shows up as a
			// body the peer cannot parse. The server path reports
			// the error instead.
			return append(dst, b.Bytes()...)
		}
		dst = append(dst, b.Bytes()...)
	}
	return dst
}

// splicer builds a SplicedResponse. How it works: for each file-backed
// records field the api layer stores Placeholder(file) (a random 16-byte
// token) in the kmsg struct (e.g. FetchResponseTopicPartition.RecordBatches)
// and then calls Finish with the whole response. Finish encodes the
// response with kmsg as usual, finds each token together with the length
// prefix kmsg wrote before it (int32 16 for classic versions, uvarint 17
// for flexible ones), and replaces prefix+token with the prefix for the
// file's length followed by a file piece. kmsg does all the encoding, so
// every version and tagged field stays right; only the records bytes are
// swapped. A token colliding with other response bytes has probability
// 2^-128 per byte position and is additionally detected (Finish fails).
//
// A splicer is used by one goroutine for one response at a time; a
// connection keeps one and reuses its buffers (the SplicedResponse it
// returns is valid until its next Finish).
type splicer struct {
	marks []mark
	// base is this response's random token prefix; a token is base
	// with its last four bytes replaced by the placeholder's number.
	base   [tokenLen]byte
	tokens []byte
	enc    []byte
	out    SplicedResponse
}

type mark struct {
	token []byte
	file  FileRecords
	at    int
}

const tokenLen = 16

// Placeholder returns the bytes to store in a records field that should be
// sent from f.
func (s *splicer) Placeholder(f FileRecords) []byte {
	if len(s.marks) == 0 {
		_, _ = rand.Read(s.base[:]) // crypto/rand.Read never fails (Go 1.24+)
		s.tokens = s.tokens[:0]
	}
	start := len(s.tokens)
	s.tokens = append(s.tokens, s.base[:tokenLen-4]...)
	s.tokens = binary.BigEndian.AppendUint32(s.tokens, uint32(len(s.marks)))
	// A grown tokens array leaves earlier tokens in the old one, where
	// they stay valid.
	t := s.tokens[start:len(s.tokens):len(s.tokens)]
	s.marks = append(s.marks, mark{token: t, file: f})
	return t
}

// ErrSplice reports a response that could not be spliced.
var ErrSplice = errors.New("network: cannot splice response")

// Finish encodes resp and returns it as a *SplicedResponse (or resp itself
// when no placeholder was handed out). Every placeholder must have been
// stored in exactly one records field of resp.
func (s *splicer) Finish(resp kmsg.Response) (kmsg.Response, error) {
	if len(s.marks) == 0 {
		return resp, nil
	}
	enc := resp.AppendTo(s.enc[:0])
	s.enc = keep(enc)
	flexible := resp.IsFlexible()
	var pb [4]byte
	var prefix []byte
	if flexible {
		prefix = binary.AppendUvarint(pb[:0], tokenLen+1)
	} else {
		prefix = binary.BigEndian.AppendUint32(pb[:0], tokenLen)
	}
	for i := range s.marks {
		m := &s.marks[i]
		at := bytes.Index(enc, m.token)
		if at < 0 {
			return nil, fmt.Errorf("%w: placeholder %d not in the encoded response", ErrSplice, i)
		}
		if bytes.Contains(enc[at+1:], m.token) {
			return nil, fmt.Errorf("%w: placeholder %d appears twice", ErrSplice, i)
		}
		if at < len(prefix) || !bytes.Equal(enc[at-len(prefix):at], prefix) {
			return nil, fmt.Errorf("%w: placeholder %d is not a whole records field", ErrSplice, i)
		}
		m.at = at - len(prefix)
	}
	marks := s.marks
	slices.SortFunc(marks, func(a, b mark) int { return cmp.Compare(a.at, b.at) })

	out := &s.out
	*out = SplicedResponse{Response: resp, pieces: out.pieces[:0]}
	pos := 0
	for _, m := range marks {
		n := m.file.Len()
		// The file's length prefix goes where the placeholder's prefix
		// and token were (at most 5 bytes into at least 17).
		var lb [binary.MaxVarintLen32]byte
		l := lb[:0]
		if flexible {
			l = binary.AppendUvarint(l, uint64(n)+1)
		} else {
			l = binary.BigEndian.AppendUint32(l, uint32(n))
		}
		copy(enc[m.at:], l)
		out.add(Piece{Bytes: enc[pos : m.at+len(l)]})
		if n > 0 {
			out.add(Piece{File: m.file})
		}
		pos = m.at + len(prefix) + tokenLen
	}
	out.add(Piece{Bytes: enc[pos:]})
	clear(s.marks) // drop the files
	s.marks = s.marks[:0]
	return out, nil
}

func (s *SplicedResponse) add(p Piece) {
	if p.File != nil {
		s.size += p.File.Len()
	} else if len(p.Bytes) == 0 {
		return
	} else {
		s.size += len(p.Bytes)
	}
	s.pieces = append(s.pieces, p)
}

// writeSpliced writes frame header bytes then the pieces to conn; file
// pieces get conn itself so sendfile can be used.
// w is the connection's, reused for the byte pieces written together
// (writev).
func writeSpliced(conn net.Conn, head []byte, s *SplicedResponse, w *splicedWriter) error {
	bufs := append(w.back[:0], head)
	defer func() {
		clear(bufs[:cap(bufs)])
		w.back = bufs[:0]
		w.nb = nil
	}()
	pending := 1
	flush := func() error {
		if pending == 0 {
			return nil
		}
		w.nb = net.Buffers(bufs[len(bufs)-pending:])
		pending = 0
		_, err := w.nb.WriteTo(conn)
		return err
	}
	for _, p := range s.pieces {
		if p.File == nil {
			bufs = append(bufs, p.Bytes)
			pending++
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		want := int64(p.File.Len())
		n, err := p.File.WriteTo(conn)
		if err != nil {
			return fmt.Errorf("sending file records: %w", err)
		}
		if n != want {
			return fmt.Errorf("sending file records: wrote %d of %d bytes", n, want)
		}
	}
	return flush()
}

// splicedWriter is what writeSpliced reuses.
type splicedWriter struct {
	back [][]byte
	nb   net.Buffers
}

// FileFetchResponse is a Fetch answer whose record data may be file ranges
// handed over by storage. The replica manager fills the kmsg response as
// usual, leaves those partitions' RecordBatches empty and attaches each
// file with SetFileRecords; the network layer does the framing when it
// writes the response (frame), sending the files with sendfile. Nothing
// above this package builds wire bytes. Its version can still be fixed
// before writing, since nothing is encoded until then.
type FileFetchResponse struct {
	*kmsg.FetchResponse
	files []fileRecordsAt
}

type fileRecordsAt struct {
	topic, partition int // indexes into Topics and that topic's Partitions
	file             FileRecords
}

// NewFileFetchResponse wraps resp, which the caller keeps filling.
func NewFileFetchResponse(resp *kmsg.FetchResponse) *FileFetchResponse {
	return &FileFetchResponse{FetchResponse: resp}
}

// SetFileRecords makes f the records of Topics[topic].Partitions[partition].
func (r *FileFetchResponse) SetFileRecords(topic, partition int, f FileRecords) {
	r.files = append(r.files, fileRecordsAt{topic: topic, partition: partition, file: f})
}

// Reserve makes room for n more SetFileRecords without growing; nil r
// (no sendfile) ignores it.
func (r *FileFetchResponse) Reserve(n int) {
	if r != nil {
		r.files = slices.Grow(r.files, n)
	}
}

// HasFiles reports whether any partition's records are a file range.
func (r *FileFetchResponse) HasFiles() bool { return len(r.files) > 0 }

// FileBytes is the size of the attached file records.
func (r *FileFetchResponse) FileBytes() int {
	n := 0
	for _, f := range r.files {
		n += f.file.Len()
	}
	return n
}

// AppendTo encodes the response with the file data read into memory (for
// tests and anything that needs bytes; the server uses frame).
func (r *FileFetchResponse) AppendTo(dst []byte) []byte {
	framed, err := r.frame()
	if err != nil {
		// AppendTo cannot fail: a failed read shows up as a body the peer
		// cannot parse. The server path reports the error instead.
		return r.FetchResponse.AppendTo(dst)
	}
	return framed.AppendTo(dst)
}

// frame encodes the response: a *SplicedResponse whose file pieces are
// the attached files, or, should a placeholder collide with other response
// bytes (probability 2^-128), the plain response with the records read
// into memory (left in the records fields; a later frame replaces them).
func (r *FileFetchResponse) frame() (kmsg.Response, error) {
	return r.frameWith(new(splicer))
}

// frameWith is frame with a connection's splicer, whose buffers the
// result uses.
func (r *FileFetchResponse) frameWith(s *splicer) (kmsg.Response, error) {
	clear(s.marks) // left by a failed Finish
	s.marks = s.marks[:0]
	for _, fa := range r.files {
		r.Topics[fa.topic].Partitions[fa.partition].RecordBatches = s.Placeholder(fa.file)
	}
	out, err := s.Finish(r.FetchResponse)
	r.clearRecords()
	if err == nil {
		return out, nil
	}
	for _, fa := range r.files {
		var b bytes.Buffer
		if _, err := fa.file.WriteTo(&b); err != nil {
			return nil, fmt.Errorf("reading fetched records: %w", err)
		}
		r.Topics[fa.topic].Partitions[fa.partition].RecordBatches = b.Bytes()
	}
	return r.FetchResponse, nil
}

func (r *FileFetchResponse) clearRecords() {
	for _, fa := range r.files {
		r.Topics[fa.topic].Partitions[fa.partition].RecordBatches = []byte{}
	}
}
