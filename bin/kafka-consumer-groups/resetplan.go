package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
)

// resetPlan is a parsed --from-file CSV: per group, the offset of each
// partition (Kafka's parseResetPlan).
type resetPlan map[string]map[tp]int64

// parseResetPlan reads the CSV Kafka's --export writes. With one --group,
// a first line of three columns means the single-group format
// "topic,partition,offset" for that group; otherwise every line is
// "group,topic,partition,offset". Later lines for a partition win.
func parseResetPlan(data string, groups []string) (resetPlan, error) {
	lines := strings.Split(data, "\n")
	for len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	plan := resetPlan{}
	add := func(g, t string, p int32, off int64) {
		if plan[g] == nil {
			plan[g] = map[tp]int64{}
		}
		plan[g][tp{t, p}] = off
	}
	single := false
	if len(groups) == 1 {
		if _, _, _, err := csvNoGroup(lines[0]); err == nil {
			single = true
		}
	}
	for _, line := range lines {
		if single {
			t, p, off, err := csvNoGroup(line)
			if err != nil {
				return nil, err
			}
			add(groups[0], t, p, off)
			continue
		}
		g, t, p, off, err := csvWithGroup(line)
		if err != nil {
			return nil, err
		}
		add(g, t, p, off)
	}
	return plan, nil
}

func csvNoGroup(line string) (topic string, partition int32, offset int64, err error) {
	f, err := splitCSVLine(line, 3)
	if err != nil {
		return "", 0, 0, err
	}
	partition, offset, err = csvNumbers(f[1], f[2])
	return f[0], partition, offset, err
}

func csvWithGroup(line string) (group, topic string, partition int32, offset int64, err error) {
	f, err := splitCSVLine(line, 4)
	if err != nil {
		return "", "", 0, 0, err
	}
	partition, offset, err = csvNumbers(f[2], f[3])
	return f[0], f[1], partition, offset, err
}

func csvNumbers(p, o string) (int32, int64, error) {
	pn, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("Cannot deserialize value of type `int` from String \"%s\": not a valid Integer value", p)
	}
	on, err := strconv.ParseInt(o, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("Cannot deserialize value of type `long` from String \"%s\": not a valid Long value", o)
	}
	return int32(pn), on, nil
}

// splitCSVLine splits one line of the reset CSV into exactly n fields; a
// field may be quoted with "..." (a doubled quote inside is a quote), as
// Jackson's CSV reader reads it.
func splitCSVLine(line string, n int) ([]string, error) {
	line = strings.TrimSuffix(line, "\r")
	var fields []string
	var b strings.Builder
	inQuotes, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(line) && line[i+1] == '"':
			b.WriteByte('"')
			i++
		case inQuotes && c == '"':
			inQuotes = false
		case !inQuotes && c == '"' && b.Len() == 0 && !quoted:
			inQuotes, quoted = true, true
		case !inQuotes && c == ',':
			fields = append(fields, b.String())
			b.Reset()
			quoted = false
		default:
			b.WriteByte(c)
		}
	}
	if inQuotes {
		return nil, fmt.Errorf("Missing closing quote for value in line '%s'", line)
	}
	fields = append(fields, b.String())
	if len(fields) > n {
		return nil, fmt.Errorf("Too many entries: expected at most %d (value #%d (%d chars) \"%s\")", n, n, len(fields[n]), fields[n])
	}
	if len(fields) < n || line == "" {
		return nil, fmt.Errorf("Not enough column values: expected %d, found %d", n, len(fields))
	}
	return fields, nil
}

// csvField quotes a value that needs it, as Jackson's CSV writer does.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\r\n") || strings.HasPrefix(s, "#") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// exportOffsetsToCsv writes --export's CSV: "topic,partition,offset" lines
// for a single --group, "group,topic,partition,offset" otherwise, then the
// empty line Kafka's println adds after the last record's line end.
func exportOffsetsToCsv(w io.Writer, rows []resetRow, singleGroup bool) {
	var b strings.Builder
	for _, r := range rows {
		if !singleGroup {
			b.WriteString(csvField(r.group) + ",")
		}
		fmt.Fprintf(&b, "%s,%d,%d\n", csvField(r.topic), r.partition, r.offset)
	}
	fmt.Fprintln(w, b.String())
}

// loadResetPlan reads --from-file once (Kafka's lazy resetPlanFromFile).
func (s *kafkaService) loadResetPlan() (resetPlan, error) {
	if s.plan != nil {
		return s.plan, nil
	}
	data, err := admintool.ReadFile(s.o.p.Value("from-file"))
	if err != nil {
		return nil, fmt.Errorf("%s", admintool.JavaString(err))
	}
	if s.plan, err = parseResetPlan(string(data), s.o.groups); err != nil {
		return nil, err
	}
	return s.plan, nil
}
