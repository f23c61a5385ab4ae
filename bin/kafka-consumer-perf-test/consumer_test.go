package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/bin/internal/clitest"
	"github.com/klassik/klassik/broker/common/jvm"
	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(clitest.Main(m)) }

// Kafka's header and row formats (ConsumerPerformance.printHeader, main's
// summary and printConsumerProgress), and regular expressions built from
// the rows' formats with the default date format.
const (
	header         = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	detailedHeader = "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
	summaryFormat  = "%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f"
	progressFormat = "%s, %d, %.4f, %.4f, %d, %.4f" + ", %d, %d, %.4f, %.4f"
)

// rowRegexp turns a Scala format string into an anchored expression: %s
// a date of the default format, %d an integer, %.4f a number with four
// decimals (or Java's NaN and Infinity).
func rowRegexp(format string) *regexp.Regexp {
	r := regexp.QuoteMeta(format)
	r = strings.ReplaceAll(r, "%s", `(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3})`)
	r = strings.ReplaceAll(r, "%d", `(-?\d+)`)
	r = strings.ReplaceAll(r, `%\.4f`, `(-?\d+\.\d{4}|NaN|-?Infinity)`)
	return regexp.MustCompile("^" + r + "$")
}

var (
	summaryRE  = rowRegexp(summaryFormat)
	progressRE = rowRegexp(progressFormat)
)

// The script, as a process against a real ZooKeeper and broker: the
// summary row counts the records and bytes the topic holds, with the
// detailed rows every interval, and the timeout's warning when the topic
// holds fewer than --messages.
func TestConsumerPerfScript(t *testing.T) {
	c := clitest.StartWithTopic(t, testcluster.Options{Brokers: 1}, "perf", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n, size = 2000, 100
	cl := c.Client()
	var rs []*kgo.Record
	for i := range n {
		key := []byte(strconv.Itoa(i % 7)) // keys count as bytes too
		rs = append(rs, &kgo.Record{Topic: "perf", Key: key, Value: make([]byte, size)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	bytes := int64(n * (size + 1))
	bs := strings.Join(c.Bootstrap(), ",")

	out, errOut, code := clitest.Script(t, nil, "kafka-consumer-perf-test.sh", "--bootstrap-server", bs, "--topic", "perf",
		"--messages", strconv.Itoa(n), "--group", "perf-g", "--timeout", "20000")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != header {
		t.Fatalf("want the header and one row:\n%s", out)
	}
	m := summaryRE.FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("not Kafka's row: %q", lines[1])
	}
	wantMB := jvm.FormatFixed(float64(bytes)/(1024*1024), 4)
	if m[3] != wantMB || m[5] != strconv.Itoa(n) {
		t.Fatalf("row says %s MB and %s records, the topic holds %s MB in %d records:\n%s", m[3], m[5], wantMB, n, out)
	}
	// fetch.time.ms + rebalance.time.ms is the run's time, between the two
	// dates (which have millisecond precision).
	rebalance, _ := strconv.ParseInt(m[7], 10, 64)
	fetch, _ := strconv.ParseInt(m[8], 10, 64)
	df, _ := parseDateFormat("yyyy-MM-dd HH:mm:ss:SSS")
	start, end := parseDefaultDate(t, m[1]), parseDefaultDate(t, m[2])
	if end-start != rebalance+fetch || df.format(start) != m[1] {
		t.Fatalf("times: %d ms between the dates, rebalance %d + fetch %d", end-start, rebalance, fetch)
	}
	t.Logf("summary: %s", lines[1])

	// The group committed its offsets: the same group reads nothing more
	// and stops at the timeout with Kafka's warning; --hide-header and
	// the deprecated thread options, which Kafka accepts and ignores.
	out, errOut, code = clitest.Script(t, nil, "kafka-consumer-perf-test.sh", "--broker-list", bs, "--topic", "perf",
		"--messages", "1", "--group", "perf-g", "--timeout", "1500", "--hide-header", "--threads", "3", "--num-fetch-threads", "2")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 ||
		lines[0] != "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test" ||
		lines[1] != "WARNING: Exiting before consuming the expected number of messages: timeout (1500 ms) exceeded. You can use the --timeout option to increase the timeout." ||
		!summaryRE.MatchString(lines[2]) || summaryRE.FindStringSubmatch(lines[2])[5] != "0" {
		t.Fatalf("a drained group: exit %d\n%s\n%s", code, out, errOut)
	}

	// Detailed stats: a row per interval, none at the end; the last row
	// counts everything.
	out, errOut, code = clitest.Script(t, nil, "kafka-consumer-perf-test.sh", "--bootstrap-server", bs, "--topic", "perf",
		"--messages", strconv.Itoa(n), "--show-detailed-stats", "--reporting-interval", "1", "--consumer.config",
		clitest.WriteFile(t, "max.poll.records=100\nfetch.max.bytes=2000\n"), "--timeout", "20000")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || lines[0] != detailedHeader {
		t.Fatalf("detailed: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, l := range lines[1:] {
		if m := progressRE.FindStringSubmatch(l); m == nil || m[2] != "0" {
			t.Fatalf("not Kafka's progress row: %q\n%s", l, out)
		}
	}
	t.Logf("%d detailed rows", len(lines)-1)
}

func parseDefaultDate(t *testing.T, s string) int64 {
	t.Helper()
	// Go's layouts want a '.' or ',' before the milliseconds.
	tm, err := time.ParseInLocation("2006-01-02 15:04:05", s[:19], time.Local)
	ms, err2 := strconv.Atoi(s[20:])
	if err != nil || err2 != nil {
		t.Fatalf("date %q: %v %v", s, err, err2)
	}
	return tm.UnixMilli() + int64(ms)
}

// SimpleDateFormat's output for these patterns and instants, printed by
// OpenJDK 17 in UTC.
func TestDateFormatAsJava(t *testing.T) {
	for _, c := range []struct {
		pattern string
		ms      int64
		want    string
	}{
		{"yyyy-MM-dd HH:mm:ss:SSS", 0, "1970-01-01 00:00:00:000"},
		{"yyyy-MM-dd HH:mm:ss:SSS", 1700000000123, "2023-11-14 22:13:20:123"},
		{"yyyy-MM-dd HH:mm:ss:SSS", 951782400999, "2000-02-29 00:00:00:999"},
		{"yy/M/d h:m:s a S", 0, "70/1/1 12:0:0 AM 0"},
		{"yy/M/d h:m:s a S", 1700000000123, "23/11/14 10:13:20 PM 123"},
		{"yy/M/d h:m:s a S", 1764633600005, "25/12/2 12:0:0 AM 5"},
		{"EEE, MMM d ''yy 'at' HH:mm:ss.SSS Z", 1700000000123, "Tue, Nov 14 '23 at 22:13:20.123 +0000"},
		{"EEEE MMMM dd yyyy kk KK hh D u G z X XX XXX", 0, "Thursday January 01 1970 24 00 12 1 4 AD UTC Z Z Z"},
		{"EEEE MMMM dd yyyy kk KK hh D u G z X XX XXX", 1700000000123, "Tuesday November 14 2023 22 10 10 318 2 AD UTC Z Z Z"},
		{"'o''clock' yyyyy.MMMMM.dd hh:mm aaa", 1764633600005, "o'clock 02025.December.02 12:00 AM"},
	} {
		f, err := parseDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		f.loc = time.UTC
		if got := f.format(c.ms); got != c.want {
			t.Errorf("%q at %d: %q, Java %q", c.pattern, c.ms, got, c.want)
		}
	}
	for p, want := range map[string]string{"yyyy-q": "Illegal pattern character 'q'", "yyyy 'x": "Unterminated quote"} {
		if _, err := parseDateFormat(p); err == nil || err.Error() != want {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// The rows' arithmetic, worked by hand: 3 MiB and 3000 records in 2000
// ms of which 500 ms joining: 1.5 MB/s and 1500 records/s over the run,
// 2 MB/s and 2000 records/s over the 1500 ms of fetching.
func TestRows(t *testing.T) {
	df, _ := parseDateFormat("HH:mm:ss:SSS")
	df.loc = time.UTC
	got := summaryRow(df, 1000, 3000, 3*1024*1024, 3000, 500)
	if want := "00:00:01:000, 00:00:03:000, 3.0000, 1.5000, 3000, 1500.0000, 500, 1500, 2.0000, 2000.0000"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	got = progressRow(df, 3*1024*1024, 1024*1024, 3000, 1000, 1000, 3000, 1000)
	if want := "00:00:03:000, 0, 3.0000, 1.0000, 3000, 1000.0000, 1000, 1000, 2.0000, 2000.0000"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	// No fetch time: Kafka prints zeros for the fetch rates of a row, and
	// divides by zero into Java's NaN/Infinity in the summary.
	if got := progressRow(df, 0, 0, 0, 0, 0, 10, 10); !strings.HasSuffix(got, ", 10, 0, 0.0000, 0.0000") {
		t.Errorf("no fetch time: %q", got)
	}
	if got := summaryRow(df, 0, 0, 0, 0, 0); got != "00:00:00:000, 00:00:00:000, 0.0000, NaN, 0, NaN, 0, 0, NaN, NaN" {
		t.Errorf("empty run: %q", got)
	}
}

// Command-line mistakes, answered as Kafka answers them.
func TestConsumerPerfErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t", "--messages", "1"}, "Missing required option(s) [bootstrap-server]\n"},
		{[]string{"--bootstrap-server", "h:1", "--messages", "1"}, "Missing required argument \"[topic]\"\n"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t"}, "Missing required argument \"[messages]\"\n"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--messages", "1", "--reporting-interval", "0"}, "Exception in thread \"main\" java.lang.IllegalArgumentException: Reporting interval must be greater than 0.\n"},
		{[]string{"--bootstrap-server", "h:1", "--topic", "t", "--messages", "x"}, "Cannot parse argument 'x' of option messages\n"},
	} {
		var out, errOut strings.Builder
		code := run(context.Background(), c.args, &out, &errOut)
		if code != 1 || !strings.HasPrefix(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q...", c.args, code, errOut.String(), c.want)
		}
	}
	cfg := clitest.WriteFile(t, "send.buffer.bytes=1\n")
	var out, errOut strings.Builder
	if code := run(context.Background(), []string{"--bootstrap-server", "h:1", "--topic", "t", "--messages", "1", "--consumer.config", cfg}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "client property send.buffer.bytes=1 is not supported by Klassik's kafka-consumer-perf-test") {
		t.Errorf("unsupported property: %d %q", code, errOut.String())
	}
}

// FuzzDateFormat: any --date-format is parsed or refused without a
// panic, and a parsed one formats any instant.
func FuzzDateFormat(f *testing.F) {
	clitest.FuzzParser(f, []string{"yyyy-MM-dd HH:mm:ss:SSS", "'x''y' EEEE MMMMM a", "q", "'", "''", "XXX Z z kk KK"},
		parseDateFormat, func(t *testing.T, in string, df *dateFormat) {
			if df != nil {
				df.format(1700000000123)
				df.format(-1)
			}
		})
}
