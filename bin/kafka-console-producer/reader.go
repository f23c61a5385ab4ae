package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitools"
)

// readerConfig holds the LineMessageReader properties (--property).
type readerConfig struct {
	parseKey     bool
	keySeparator string
	ignoreError  bool
	// nullMarker, when set, turns a key or value equal to it into null.
	nullMarker string
}

func newReaderConfig(props map[string]string) (readerConfig, error) {
	c := readerConfig{keySeparator: "\t"}
	var err error
	if c.parseKey, err = lenientBool(props, "parse.key"); err != nil {
		return c, err
	}
	if c.ignoreError, err = lenientBool(props, "ignore.error"); err != nil {
		return c, err
	}
	if v, ok := props["key.separator"]; ok {
		c.keySeparator = clitools.Unescape(v)
	}
	if c.keySeparator == "" {
		return c, fmt.Errorf("key.separator must not be empty")
	}
	c.nullMarker = props["null.marker"]
	return c, nil
}

// lenientBool is the reader's rule: trimmed, case-insensitive "true"
// means true and anything else false.
func lenientBool(props map[string]string, key string) (bool, error) {
	return strings.EqualFold(strings.TrimSpace(props[key]), "true"), nil
}

// lineReader is Kafka's LineMessageReader: one record per line, the key
// split off at the first key.separator when parse.key is set.
type lineReader struct {
	cfg    readerConfig
	sc     *bufio.Scanner
	lineNo int
}

func newLineReader(r io.Reader, cfg readerConfig) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	return &lineReader{cfg: cfg, sc: sc}
}

// next returns the next record or io.EOF.
func (l *lineReader) next() (*kgo.Record, error) {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	l.lineNo++
	return parseLine(l.sc.Text(), l.lineNo, l.cfg)
}

// parseLine turns one input line into a record (Topic unset).
func parseLine(line string, lineNo int, cfg readerConfig) (*kgo.Record, error) {
	line = strings.TrimSuffix(line, "\r")
	if !cfg.parseKey {
		return &kgo.Record{Value: cfg.field(line)}, nil
	}
	k, v, ok := strings.Cut(line, cfg.keySeparator)
	if !ok {
		if cfg.ignoreError {
			return &kgo.Record{Value: cfg.field(line)}, nil
		}
		return nil, fmt.Errorf("No key found on line %d: %s", lineNo, line)
	}
	return &kgo.Record{Key: cfg.field(k), Value: cfg.field(v)}, nil
}

func (c readerConfig) field(s string) []byte {
	if c.nullMarker != "" && s == c.nullMarker {
		return nil
	}
	return []byte(s)
}
