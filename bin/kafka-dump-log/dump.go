package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klassik/klassik/broker/group"
	"github.com/klassik/klassik/broker/storage"
	"github.com/klassik/klassik/broker/storage/record"
	"github.com/klassik/klassik/broker/txn"
)

type options struct {
	files              []string
	printDataLog       bool
	deepIteration      bool
	indexSanityOnly    bool
	verifyOnly         bool
	offsetsDecoder     bool
	txnLogDecoder      bool
	skipRecordMetadata bool
	maxBytes           int
	maxMessageSize     int
}

// fileList collects --files values, comma separated and repeatable.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*f = append(*f, p)
		}
	}
	return nil
}

// dumper accumulates the cross-file reports Kafka prints at the end.
type dumper struct {
	opts   options
	out    *bufio.Writer
	errOut io.Writer
	failed bool

	indexMismatches  map[string][][2]int64
	nonConsecutive   map[string][][2]int64
	tsMismatches     map[string][][2]int64
	tsOutOfOrder     map[string][][2]int64
	tsOffsetNotFound map[string][][2]int64
	order            []string // file order for deterministic reports
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kafka-dump-log", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files fileList
	var o options
	fs.Var(&files, "files", "REQUIRED: The comma separated list of data and index log files to be dumped.")
	fs.BoolVar(&o.printDataLog, "print-data-log", false, "If set, printing the messages content when dumping data logs. Automatically set if any decoder option is specified.")
	fs.BoolVar(&o.deepIteration, "deep-iteration", false, "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.")
	fs.BoolVar(&o.indexSanityOnly, "index-sanity-check", false, "If set, just checks the index sanity without printing its content. This is the same check that is executed on broker startup to determine if an index needs rebuilding or not.")
	fs.BoolVar(&o.verifyOnly, "verify-index-only", false, "If set, just verify the index log without printing its content.")
	fs.BoolVar(&o.offsetsDecoder, "offsets-decoder", false, "If set, log data will be parsed as offset data from the __consumer_offsets topic.")
	fs.BoolVar(&o.txnLogDecoder, "transaction-log-decoder", false, "If set, log data will be parsed as transaction metadata from the __transaction_state topic.")
	fs.BoolVar(&o.skipRecordMetadata, "skip-record-metadata", false, "Whether to skip printing metadata for each record.")
	fs.IntVar(&o.maxBytes, "max-bytes", math.MaxInt32, "Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
	fs.IntVar(&o.maxMessageSize, "max-message-size", 5*1024*1024, "Size of largest message.")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "This tool helps to parse a log file and dump its contents to the console, useful for debugging a seemingly corrupt log segment.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "Found non argument parameters: %s\n", strings.Join(fs.Args(), ","))
		fs.Usage()
		return 1
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, `Missing required argument "[files]"`)
		fs.Usage()
		return 1
	}
	o.files = files
	if o.offsetsDecoder || o.txnLogDecoder {
		o.printDataLog = true
	}
	if o.printDataLog {
		o.deepIteration = true
	}
	d := &dumper{opts: o, out: bufio.NewWriter(stdout), errOut: stderr,
		indexMismatches: map[string][][2]int64{}, nonConsecutive: map[string][][2]int64{},
		tsMismatches: map[string][][2]int64{}, tsOutOfOrder: map[string][][2]int64{}, tsOffsetNotFound: map[string][][2]int64{}}
	for _, f := range o.files {
		d.dumpFile(f)
	}
	d.out.Flush()
	d.printReports()
	if d.failed {
		return 1
	}
	return 0
}

func (d *dumper) errorf(format string, args ...any) {
	d.out.Flush()
	fmt.Fprintf(d.errOut, format+"\n", args...)
	d.failed = true
}

func (d *dumper) dumpFile(path string) {
	fmt.Fprintf(d.out, "Dumping %s\n", path)
	name := filepath.Base(path)
	suffix := ""
	if i := strings.LastIndex(name, "."); i >= 0 {
		suffix = name[i:]
	}
	abs, _ := filepath.Abs(path)
	d.order = append(d.order, abs)
	var err error
	switch suffix {
	case ".log":
		err = d.dumpLog(path, abs)
	case ".index":
		err = d.dumpIndex(path, abs)
	case ".timeindex":
		err = d.dumpTimeIndex(path, abs)
	case ".snapshot":
		err = d.dumpProducerSnapshot(path)
	case ".txnindex":
		err = d.dumpTxnIndex(path)
	default:
		d.errorf("Ignoring unknown file %s: only .log, .index, .timeindex, .txnindex and .snapshot files can be dumped", path)
		return
	}
	if err != nil {
		d.errorf("Error dumping %s: %v", path, err)
	}
}

// baseOffsetOf parses the segment base offset: the text before the first dot.
func baseOffsetOf(path string) (int64, error) {
	name := filepath.Base(path)
	n, err := strconv.ParseInt(strings.SplitN(name, ".", 2)[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("file name %s does not start with a base offset", name)
	}
	return n, nil
}

// siblingPath swaps the suffix of a segment file.
func siblingPath(path, suffix string) string {
	name := filepath.Base(path)
	return filepath.Join(filepath.Dir(path), strings.SplitN(name, ".", 2)[0]+suffix)
}

func (d *dumper) dumpLog(path, abs string) error {
	base, err := baseOffsetOf(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "Starting offset: %d\n", base)
	if d.opts.maxBytes >= 0 && len(data) > d.opts.maxBytes {
		data = data[:d.opts.maxBytes]
	}
	validBytes := 0
	lastOffset := int64(-1)
	var recErr error
	err = record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
		d.printBatch(batch, h, validBytes)
		if d.opts.deepIteration {
			recs, err := record.Records(batch)
			if err != nil {
				recErr = fmt.Errorf("batch at position %d: %w", validBytes, err)
				return recErr
			}
			for i := range recs {
				r := &recs[i]
				off := r.Offset(h)
				if lastOffset != -1 && off != lastOffset+1 {
					d.nonConsecutive[abs] = append(d.nonConsecutive[abs], [2]int64{lastOffset, off})
				}
				lastOffset = off
				d.printRecord(h, r)
			}
		}
		validBytes += h.Size()
		return nil
	})
	if recErr != nil {
		return recErr
	}
	// A malformed or truncated tail ends the iteration, as in Kafka. A
	// file with no valid batch at all is not a segment (a log4j server.log
	// renamed, a checkpoint, random bytes): refuse it rather than print a
	// single "invalid bytes" line and succeed.
	if validBytes == 0 && len(data) > 0 && d.opts.maxBytes == math.MaxInt32 {
		reason := "no complete record batch"
		if _, herr := record.ParseBatchHeader(data); herr != nil {
			reason = herr.Error()
		} else if err != nil {
			reason = err.Error()
		}
		return fmt.Errorf("%s is not a log segment: its %d bytes do not start with a valid record batch (%s)", path, len(data), reason)
	}
	if trailing := len(data) - validBytes; trailing > 0 && d.opts.maxBytes == math.MaxInt32 {
		fmt.Fprintf(d.out, "Found %d invalid bytes at the end of %s\n", trailing, filepath.Base(path))
	}
	return nil
}

func optionalLong(v int64, ok bool) string {
	if !ok {
		return "OptionalLong.empty"
	}
	return fmt.Sprintf("OptionalLong[%d]", v)
}

func (d *dumper) printBatch(batch []byte, h record.BatchHeader, position int) {
	fmt.Fprintf(d.out, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s",
		h.BaseOffset, h.LastOffset(), h.NumRecords, h.BaseSequence, h.LastSequence(), h.ProducerID, h.ProducerEpoch,
		h.PartitionLeaderEpoch, h.IsTransactional(), h.IsControl(), optionalLong(h.DeleteHorizon(), h.HasDeleteHorizon()))
	fmt.Fprintf(d.out, " position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		position, h.TimestampType(), h.MaxTimestamp, h.Size(), h.Magic, h.Compression(), h.CRC, record.CheckCRC(batch) == nil)
}

func sizeOf(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// javaString renders bytes as Java's new String(bytes, UTF_8) would.
func javaString(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

func (d *dumper) printRecord(h record.BatchHeader, r *record.Record) {
	prefix := "| "
	if !d.opts.skipRecordMetadata {
		seq := record.NoSequence
		if h.BaseSequence != record.NoSequence {
			seq = record.IncrementSequence(h.BaseSequence, r.OffsetDelta)
		}
		keys := make([]string, len(r.Headers))
		for i, hd := range r.Headers {
			keys[i] = hd.Key
		}
		fmt.Fprintf(d.out, "%soffset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
			prefix, r.Offset(h), h.TimestampType(), r.Timestamp(h), sizeOf(r.Key), sizeOf(r.Value), seq, strings.Join(keys, ","))
		prefix = " "
		if h.IsControl() {
			d.printControl(r)
		}
	}
	if d.opts.printDataLog && !h.IsControl() {
		key, payload, hasKey, hasPayload := d.parse(r)
		if hasKey {
			fmt.Fprintf(d.out, "%skey: %s", prefix, key)
			prefix = " "
		}
		if hasPayload {
			fmt.Fprintf(d.out, " payload: %s", payload)
		}
	}
	fmt.Fprintln(d.out)
}

func (d *dumper) printControl(r *record.Record) {
	if len(r.Key) < 4 {
		fmt.Fprintf(d.out, " controlType: UNKNOWN(-1)")
		return
	}
	id := int16(binary.BigEndian.Uint16(r.Key[2:]))
	switch id {
	case 0, 1:
		_, epoch, err := record.ParseEndTxnMarker(r.Value)
		if err != nil {
			fmt.Fprintf(d.out, " endTxnMarker: invalid (%v)", err)
			return
		}
		fmt.Fprintf(d.out, " endTxnMarker: %s coordinatorEpoch: %d", record.ControlType(id), epoch)
	default:
		names := map[int16]string{2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER"}
		name, ok := names[id]
		if !ok {
			name = "UNKNOWN"
		}
		fmt.Fprintf(d.out, " controlType: %s(%d)", name, id)
	}
}

// parse decodes key and value with the selected decoder.
func (d *dumper) parse(r *record.Record) (key, payload string, hasKey, hasPayload bool) {
	format := formatOffsetsRecord
	switch {
	case d.opts.offsetsDecoder:
	case d.opts.txnLogDecoder:
		format = formatTxnLogRecord
	default:
		return javaString(r.Key), javaString(r.Value), r.Key != nil, r.Value != nil
	}
	k, v, err := format(r.Key, r.Value)
	if err != nil {
		d.errorf("%v", err)
		return "", "", false, false
	}
	return k, v, true, true
}

// formatOffsetsRecord renders a __consumer_offsets record as Kafka 3.4's
// GroupMetadataManager.formatRecordKeyAndValue does, through the group
// coordinator's own codec; a key it cannot read fails with Kafka's message.
func formatOffsetsRecord(key, value []byte) (string, string, error) {
	const invalidKey = "Failed to decode message using offset topic decoder (message had an invalid key)"
	if key == nil {
		return "", "", errors.New("Failed to decode message using offset topic decoder (message had a missing key)")
	}
	if _, err := group.DecodeKey(key); err != nil {
		if len(key) < 2 || errors.Is(err, group.ErrUnknownKeyVersion) {
			return "", "", errors.New(invalidKey)
		}
		return "", "", fmt.Errorf("%s: %v", invalidKey, err)
	}
	return group.DescribeKeyAndValue(key, value)
}

// formatTxnLogRecord renders a __transaction_state record as Kafka 2.8's
// DumpLogSegments prints it with TransactionLog.formatRecordKeyAndValue,
// through the transaction coordinator's own codec (broker/txn): the
// partitions of an Empty value are not shown, the others in the order of
// Kafka's hash set. A record the codec cannot read fails with the reason
// (Kafka dies on it with an IllegalStateException).
func formatTxnLogRecord(key, value []byte) (string, string, error) {
	if _, err := txn.DecodeKey(key); err != nil {
		return "", "", fmt.Errorf("Failed to decode message using transaction log decoder (message had an invalid key): %v", err)
	}
	k, v, err := txn.FormatRecordKeyAndValue(key, value)
	if err != nil {
		return "", "", fmt.Errorf("Failed to decode message using transaction log decoder (message had an invalid value): %v", err)
	}
	return k, v, nil
}

// indexEntry is one offset-index or time-index entry, offsets absolute.
type indexEntry struct {
	offset    int64
	position  int64
	timestamp int64
}

// indexFormat is the layout of one kind of index file.
type indexFormat struct {
	noun      string // what the file is not, when its size is off
	fileName  string // how the sanity check names the file
	entrySize int
	decode    func(e []byte, base int64) indexEntry
}

// offsetIndex entries: offset relative to the base (int32), file position
// (int32). timeIndex entries: timestamp (int64), relative offset (int32).
var (
	offsetIndex = indexFormat{"an offset index", "Index file", 8, func(e []byte, base int64) indexEntry {
		return indexEntry{offset: base + int64(int32(binary.BigEndian.Uint32(e))), position: int64(int32(binary.BigEndian.Uint32(e[4:])))}
	}}
	timeIndex = indexFormat{"a time index", "Time index file", 12, func(e []byte, base int64) indexEntry {
		return indexEntry{timestamp: int64(binary.BigEndian.Uint64(e)), offset: base + int64(int32(binary.BigEndian.Uint32(e[8:])))}
	}}
)

// readIndex decodes every whole entry of an index file and returns them
// with the file's length in bytes.
func readIndex(path string, base int64, f indexFormat) ([]indexEntry, int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	out := make([]indexEntry, len(b)/f.entrySize)
	for i := range out {
		out[i] = f.decode(b[i*f.entrySize:], base)
	}
	return out, int64(len(b)), nil
}

// loadIndex reads the index file at path, named after its segment's base
// offset. Unless only its sanity is checked, a size that is not a whole
// number of entries is refused.
func (d *dumper) loadIndex(path string, f indexFormat) (base int64, entries []indexEntry, length int64, err error) {
	if base, err = baseOffsetOf(path); err != nil {
		return 0, nil, 0, err
	}
	if entries, length, err = readIndex(path, base, f); err != nil {
		return 0, nil, 0, err
	}
	if !d.opts.indexSanityOnly && length%int64(f.entrySize) != 0 {
		return 0, nil, 0, fmt.Errorf("%s is not %s: %d bytes is not a multiple of the %d-byte entry size", path, f.noun, length, f.entrySize)
	}
	return base, entries, length, nil
}

// lookupPosition is the offset index lookup: the last entry with offset
// <= target, else the segment start.
func lookupPosition(entries []indexEntry, base, target int64) int64 {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].offset > target })
	if i == 0 {
		return 0
	}
	_ = base
	return entries[i-1].position
}

// sanityPassed ends an --index-sanity-check whose entries looked right: the
// file must still be a whole number of entries long (Kafka's
// sanityCheck message names "Index file" or "Time index file").
func (d *dumper) sanityPassed(path, abs string, length int64, f indexFormat) error {
	if length%int64(f.entrySize) != 0 {
		return fmt.Errorf("%s %s is corrupt, found %d bytes which is neither positive nor a multiple of %d.", f.fileName, abs, length, f.entrySize)
	}
	fmt.Fprintf(d.out, "%s passed sanity check.\n", path)
	return nil
}

func (d *dumper) dumpIndex(path, abs string) error {
	base, entries, length, err := d.loadIndex(path, offsetIndex)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintf(d.out, "%s is empty.\n", path)
		return nil
	}
	if d.opts.indexSanityOnly {
		if last := entries[len(entries)-1].offset; last < base {
			return fmt.Errorf("Corrupt index found, index file (%s) has non-zero size but the last offset is %d which is less than the base offset %d.", abs, last, base)
		}
		return d.sanityPassed(path, abs, length, offsetIndex)
	}
	logData, logErr := os.ReadFile(siblingPath(path, ".log"))
	if logErr != nil {
		d.errorf("Cannot verify %s against its log segment: %v", path, logErr)
	}
	for i, e := range entries {
		// A preallocated index ends in zeros; the first zero entry ends it.
		if e.offset == base && i > 0 {
			return nil
		}
		if logErr == nil {
			if last, ok := firstBatchLastOffset(logData, e.position, d.opts.maxMessageSize); ok && last != e.offset {
				d.indexMismatches[abs] = append(d.indexMismatches[abs], [2]int64{e.offset, last})
			}
		}
		if !d.opts.verifyOnly {
			fmt.Fprintf(d.out, "offset: %d position: %d\n", e.offset, e.position)
		}
	}
	return nil
}

func firstBatchLastOffset(log []byte, pos int64, maxSize int) (int64, bool) {
	if pos < 0 || pos >= int64(len(log)) {
		return 0, false
	}
	end := min(int64(len(log)), pos+int64(maxSize))
	h, err := record.ParseBatchHeader(log[pos:end])
	if err != nil || int64(h.Size()) > end-pos {
		return 0, false
	}
	return h.LastOffset(), true
}

func (d *dumper) dumpTimeIndex(path, abs string) error {
	base, entries, length, err := d.loadIndex(path, timeIndex)
	if err != nil {
		return err
	}
	if d.opts.indexSanityOnly {
		if len(entries) > 0 {
			first, last := entries[0], entries[len(entries)-1]
			if last.timestamp < first.timestamp {
				return fmt.Errorf("Corrupt time index found, time index file (%s) has non-zero size but the last timestamp is %d which is less than the first timestamp %d", abs, last.timestamp, first.timestamp)
			}
			if last.offset < base {
				return fmt.Errorf("Corrupt time index found, time index file (%s) has non-zero size but the last offset is %d which is less than the first offset %d", abs, last.offset, base)
			}
		}
		return d.sanityPassed(path, abs, length, timeIndex)
	}
	logData, err := os.ReadFile(siblingPath(path, ".log"))
	if err != nil {
		return err
	}
	offIdx, _, err := readIndex(siblingPath(path, ".index"), base, offsetIndex)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	prev := record.NoTimestamp
	for i, e := range entries {
		if e.offset == base && i > 0 {
			return nil
		}
		pos := lookupPosition(trimZeroEntries(offIdx, base), base, e.offset)
		var found *record.BatchHeader
		var foundBatch []byte
		if pos >= 0 && pos <= int64(len(logData)) {
			_ = record.ForEachBatch(logData[pos:], func(batch []byte, h record.BatchHeader) error {
				if h.LastOffset() >= e.offset {
					found, foundBatch = &h, batch
					return errStop
				}
				return nil
			})
		}
		switch {
		case found == nil:
			d.tsOffsetNotFound[abs] = append(d.tsOffsetNotFound[abs], [2]int64{e.offset, -1})
		case found.LastOffset() != e.offset:
			d.tsOffsetNotFound[abs] = append(d.tsOffsetNotFound[abs], [2]int64{e.offset, found.LastOffset()})
		default:
			maxTS := record.NoTimestamp
			_ = record.ForEachRecord(foundBatch, func(r *record.Record) error {
				maxTS = max(maxTS, r.Timestamp(*found))
				return nil
			})
			if maxTS != e.timestamp {
				d.tsMismatches[abs] = append(d.tsMismatches[abs], [2]int64{e.timestamp, maxTS})
			}
			if prev >= e.timestamp {
				d.tsOutOfOrder[abs] = append(d.tsOutOfOrder[abs], [2]int64{e.timestamp, prev})
			}
		}
		if !d.opts.verifyOnly {
			fmt.Fprintf(d.out, "timestamp: %d offset: %d\n", e.timestamp, e.offset)
		}
		prev = e.timestamp
	}
	return nil
}

var errStop = errors.New("stop")

// trimZeroEntries drops the zero-filled tail of a preallocated index.
func trimZeroEntries(entries []indexEntry, base int64) []indexEntry {
	for i := 1; i < len(entries); i++ {
		if entries[i].offset == base {
			return entries[:i]
		}
	}
	return entries
}

func scalaOption(v int64) string {
	if v < 0 {
		return "None"
	}
	return fmt.Sprintf("Some(%d)", v)
}

func (d *dumper) dumpProducerSnapshot(path string) error {
	entries, err := storage.ReadProducerSnapshot(path)
	if err != nil {
		if errors.Is(err, storage.ErrCorruptProducerSnapshot) {
			d.errorf("%v", err)
			return nil
		}
		return err
	}
	for _, e := range entries {
		fmt.Fprintf(d.out, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s lastTimestamp: %d ",
			e.ProducerID, e.ProducerEpoch, e.CoordinatorEpoch, scalaOption(e.CurrentTxnFirstOffset), e.LastTimestamp)
		if len(e.Batches) > 0 {
			b := e.Batches[0]
			fmt.Fprintf(d.out, "firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				b.FirstSeq(), b.LastSeq, b.LastOffset, b.OffsetDelta, b.Timestamp)
		}
		fmt.Fprintln(d.out)
	}
	return nil
}

// dumpTxnIndex prints the aborted-transaction entries: 34 bytes each,
// big-endian, a version (int16) then producerId, firstOffset, lastOffset
// and lastStableOffset (int64 each).
func (d *dumper) dumpTxnIndex(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const size = 34
	for p := 0; p+size <= len(b); p += size {
		e := b[p : p+size]
		fmt.Fprintf(d.out, "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
			int16(binary.BigEndian.Uint16(e)), int64(binary.BigEndian.Uint64(e[2:])), int64(binary.BigEndian.Uint64(e[10:])),
			int64(binary.BigEndian.Uint64(e[18:])), int64(binary.BigEndian.Uint64(e[26:])))
	}
	return nil
}

func (d *dumper) printReports() {
	w := d.errOut
	for _, f := range d.order {
		if ms := d.indexMismatches[f]; len(ms) > 0 {
			// Kafka prepends to an immutable list, so it reports newest first.
			fmt.Fprintf(w, "Mismatches in :%s\n", f)
			for _, m := range reversed(ms) {
				fmt.Fprintf(w, "  Index offset: %d, log offset: %d\n", m[0], m[1])
			}
		}
	}
	for _, f := range d.order {
		if ms := d.tsMismatches[f]; len(ms) > 0 {
			fmt.Fprintf(w, "Found timestamp mismatch in :%s\n", f)
			for _, m := range ms {
				fmt.Fprintf(w, "  Index timestamp: %d, log timestamp: %d\n", m[0], m[1])
			}
		}
	}
	for _, f := range d.order {
		if ms := d.tsOutOfOrder[f]; len(ms) > 0 {
			fmt.Fprintf(w, "Found out of order timestamp in :%s\n", f)
			for _, m := range ms {
				fmt.Fprintf(w, "  Index timestamp: %d, Previously indexed timestamp: %d\n", m[0], m[1])
			}
		}
	}
	for _, f := range d.order {
		if ms := d.tsOffsetNotFound[f]; len(ms) > 0 {
			fmt.Fprintln(w, "The following indexed offsets are not found in the log.")
			for _, m := range ms {
				fmt.Fprintf(w, "Indexed offset: %d, found log offset: %d\n", m[0], m[1])
			}
		}
	}
	for _, f := range d.order {
		if ms := d.nonConsecutive[f]; len(ms) > 0 {
			fmt.Fprintf(w, "Non-consecutive offsets in %s\n", f)
			for _, m := range reversed(ms) {
				fmt.Fprintf(w, "  %d is followed by %d\n", m[0], m[1])
			}
		}
	}
}

func reversed(in [][2]int64) [][2]int64 {
	out := make([][2]int64, len(in))
	for i, v := range in {
		out[len(in)-1-i] = v
	}
	return out
}
