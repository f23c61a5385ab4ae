package storage

// FileRecords: a slice of a segment file handed to the network layer
// (Kafka's FileRecords.slice). It never moves the file's shared offset, so
// any number of readers may use the same segment file concurrently.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// FileRecords is a byte range of a segment's .log file.
type FileRecords struct {
	File *os.File // nil for an empty result
	Pos  int64    // byte position in File
	Size int32    // number of bytes
}

// Len returns the number of bytes in the range.
func (r FileRecords) Len() int { return int(r.Size) }

// ReadAll returns the bytes of the range (pread).
func (r FileRecords) ReadAll() ([]byte, error) {
	if r.Size <= 0 || r.File == nil {
		return nil, nil
	}
	b := make([]byte, r.Size)
	n, err := r.File.ReadAt(b, r.Pos)
	if n == len(b) {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		// The segment was truncated underneath the read (replica
		// truncation); hand out what is still there.
		return b[:n], nil
	}
	return b[:n], fmt.Errorf("storage: read records: %w", err)
}

// WriteTo writes the range to w. For a *net.TCPConn it uses sendfile(2)
// with an explicit offset, which leaves the file offset untouched and so is
// safe with concurrent readers; otherwise it copies through a section reader
// (pread).
func (r FileRecords) WriteTo(w io.Writer) (int64, error) {
	if r.Size <= 0 || r.File == nil {
		return 0, nil
	}
	if tc, ok := w.(*net.TCPConn); ok {
		n, err, handled := r.sendfile(tc)
		if handled {
			return n, err
		}
	}
	return io.Copy(w, io.NewSectionReader(r.File, r.Pos, int64(r.Size)))
}

func (r FileRecords) sendfile(tc *net.TCPConn) (written int64, err error, handled bool) {
	connRC, err := tc.SyscallConn()
	if err != nil {
		return 0, nil, false
	}
	fileRC, err := r.File.SyscallConn()
	if err != nil {
		return 0, nil, false
	}
	off := r.Pos
	remain := int64(r.Size)
	var opErr error
	ctlErr := fileRC.Control(func(infd uintptr) {
		werr := connRC.Write(func(outfd uintptr) bool {
			for remain > 0 {
				n, e := syscall.Sendfile(int(outfd), int(infd), &off, int(remain))
				if n > 0 {
					written += int64(n)
					remain -= int64(n)
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until the socket is writable
				case e == syscall.EINTR:
					continue
				case e != nil:
					opErr = e
					return true
				case n == 0:
					// EOF: the file shrank under us (truncation).
					return true
				}
			}
			return true
		})
		if opErr == nil {
			opErr = werr
		}
	})
	if ctlErr != nil {
		return written, ctlErr, true
	}
	if opErr != nil {
		if written == 0 && (errors.Is(opErr, syscall.EINVAL) || errors.Is(opErr, syscall.ENOSYS)) {
			return 0, nil, false
		}
		return written, fmt.Errorf("storage: sendfile: %w", opErr), true
	}
	return written, nil, true
}
