package storage

// Checkpoint files (Kafka's CheckpointFile / OffsetCheckpointFile,
// BrokerMetadataCheckpoint): Kafka's text formats (a version line, a count
// line, then one entry per line; meta.properties as Java properties),
// always written as tmp + fsync + rename + fsync(dir).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klassik/klassik/broker/common"
)

const (
	recoveryPointCheckpointFile  = "recovery-point-offset-checkpoint"
	logStartOffsetCheckpointFile = "log-start-offset-checkpoint"
	replicationOffsetCheckpoint  = "replication-offset-checkpoint"
	cleanerOffsetCheckpointFile  = "cleaner-offset-checkpoint"
	metaPropertiesFile           = "meta.properties"
	cleanShutdownFile            = ".kafka_cleanshutdown"
	lockFile                     = ".lock"
	checkpointVersion            = 0
	checkpointTmpSuffix          = ".tmp"
)

func parseInt(s string, bits int) (int64, error) { return strconv.ParseInt(s, 10, bits) }

// writeFileAtomic writes data to path via path.tmp, fsync, rename and an
// fsync of the directory, so a crash leaves either the old or the new file.
func writeFileAtomic(path string, data []byte) error { return writeFileRenamed(path, data, true) }

// writeFileRenamed writes data to path.tmp and renames it to path, so a
// reader never sees a partly written file. With sync the tmp file is
// fsync'd before the rename and the directory after it; without, the
// caller makes both durable later (syncFile, syncDir).
func writeFileRenamed(path string, data []byte, sync bool) error {
	tmp := path + checkpointTmpSuffix
	if err := injectedFault(FaultCheckpoint, tmp); err != nil {
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("storage: write %s: %w", tmp, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("storage: fsync %s: %w", tmp, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("storage: rename %s: %w", tmp, err)
	}
	if !sync {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

// syncFile fsyncs the file at path. A missing file is not an error.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("storage: fsync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("storage: fsync %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("storage: open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("storage: fsync dir %s: %w", dir, err)
	}
	return nil
}

// encodeCheckpoint renders version, count and the entry lines.
func encodeCheckpoint(lines []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeCheckpointFile(path string, lines []string) error {
	return writeFileAtomic(path, encodeCheckpoint(lines))
}

// decodeCheckpoint parses the CheckpointFile text format into entry fields.
// Empty input or a missing count line means no entries.
func decodeCheckpoint(name string, data []byte) ([][]string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	if !sc.Scan() {
		return nil, sc.Err()
	}
	v, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil {
		return nil, fmt.Errorf("storage: %s line 1: malformed version %q", name, sc.Text())
	}
	if v != checkpointVersion {
		return nil, fmt.Errorf("storage: %s: unrecognised checkpoint version %d", name, v)
	}
	if !sc.Scan() {
		return nil, sc.Err()
	}
	count, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || count < 0 {
		return nil, fmt.Errorf("storage: %s line 2: malformed entry count %q", name, sc.Text())
	}
	var out [][]string
	line := 2
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			return nil, fmt.Errorf("storage: %s line %d: empty entry", name, line)
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) != count {
		return nil, fmt.Errorf("storage: %s: expected %d entries but found %d", name, count, len(out))
	}
	return out, nil
}

func readCheckpointFile(path string) ([][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeCheckpoint(path, data)
}

// ReadOffsetCheckpoint reads a "<topic> <partition> <offset>" checkpoint. A
// missing file is an empty map.
func ReadOffsetCheckpoint(path string) (map[common.TopicPartition]int64, error) {
	lines, err := readCheckpointFile(path)
	if os.IsNotExist(err) {
		return map[common.TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeOffsetEntries(path, lines)
}

func decodeOffsetEntries(name string, lines [][]string) (map[common.TopicPartition]int64, error) {
	m := make(map[common.TopicPartition]int64, len(lines))
	for i, f := range lines {
		if len(f) != 3 {
			return nil, fmt.Errorf("storage: %s line %d: want 3 fields, got %d", name, i+3, len(f))
		}
		p, err1 := parseInt(f[1], 32)
		o, err2 := parseInt(f[2], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("storage: %s line %d: malformed entry %q", name, i+3, strings.Join(f, " "))
		}
		m[common.TopicPartition{Topic: f[0], Partition: int32(p)}] = o
	}
	return m, nil
}

// encodeOffsetCheckpoint renders entries sorted by topic and partition
// (Kafka's order is unspecified; sorting keeps files diffable).
func encodeOffsetCheckpoint(m map[common.TopicPartition]int64) []string {
	tps := make([]common.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	lines := make([]string, len(tps))
	for i, tp := range tps {
		lines[i] = fmt.Sprintf("%s %d %d", tp.Topic, tp.Partition, m[tp])
	}
	return lines
}

// WriteOffsetCheckpoint atomically writes an offset checkpoint file.
func WriteOffsetCheckpoint(path string, m map[common.TopicPartition]int64) error {
	return writeCheckpointFile(path, encodeOffsetCheckpoint(m))
}

// MetaProperties is the content of meta.properties (version 0, ZK mode).
type MetaProperties struct {
	Version   int
	BrokerID  int32
	ClusterID string
}

// encodeMetaProperties writes the Java Properties form Kafka uses: an empty
// comment, a date comment, then key=value lines.
func encodeMetaProperties(mp MetaProperties, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString("#\n")
	b.WriteString("#" + now.UTC().Format("Mon Jan 02 15:04:05 MST 2006") + "\n")
	fmt.Fprintf(&b, "cluster.id=%s\n", mp.ClusterID)
	fmt.Fprintf(&b, "version=%d\n", mp.Version)
	fmt.Fprintf(&b, "broker.id=%d\n", mp.BrokerID)
	return b.Bytes()
}

// parseProperties reads Java .properties key=value lines (comments with #
// or !, blank lines ignored; ':' also separates, as in Java).
func parseProperties(data []byte) map[string]string {
	m := map[string]string{}
	for _, raw := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		i := strings.IndexAny(l, "=:")
		if i < 0 {
			m[l] = ""
			continue
		}
		m[strings.TrimSpace(l[:i])] = strings.TrimSpace(l[i+1:])
	}
	return m
}

func decodeMetaProperties(data []byte) (MetaProperties, error) {
	p := parseProperties(data)
	var mp MetaProperties
	if v, ok := p["version"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return mp, fmt.Errorf("storage: meta.properties: bad version %q", v)
		}
		mp.Version = n
	}
	if mp.Version != 0 {
		return mp, fmt.Errorf("storage: meta.properties: unsupported version %d (ZooKeeper mode uses 0)", mp.Version)
	}
	id, ok := p["broker.id"]
	if !ok {
		return mp, fmt.Errorf("storage: meta.properties: missing broker.id")
	}
	n, err := strconv.ParseInt(id, 10, 32)
	if err != nil {
		return mp, fmt.Errorf("storage: meta.properties: bad broker.id %q", id)
	}
	mp.BrokerID = int32(n)
	mp.ClusterID = p["cluster.id"]
	return mp, nil
}
