package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The driver's own brokers serve klassik.http.listener with
// klassik.http.pprof.enable: /debug/pprof/allocs gives each broker's exact
// count of heap allocations, read before and after a phase, and with
// --profile /debug/pprof/profile gives CPU profiles.

// mallocs reads the broker's count of heap allocations from the MemStats
// that /debug/pprof/allocs?debug=1 ends with ("# Mallocs = N"). The
// profile handler reads MemStats (runtime.ReadMemStats, which flushes
// every P's cached spans first) before it allocates anything for the
// profile, so the count is exact up to the HTTP request's own
// allocations, which are the same for every reading. /metrics is no
// substitute: its go_memstats_mallocs_total comes from runtime/metrics,
// which counts an object only once the span it was taken from leaves its
// P's cache, so a reading lags by up to thousands of objects, more than a
// consume allocates.
func mallocs(ctx context.Context, httpAddr string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := "http://" + httpAddr + "/debug/pprof/allocs?debug=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# Mallocs = "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no \"# Mallocs = \" line in %s", url)
}

// batchCounter is a kgo hook counting the batches a client produced
// (acknowledged) and fetched, and its Fetch requests answered.
type batchCounter struct{ produced, fetched, fetches atomic.Int64 }

func (c *batchCounter) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, _ kgo.BrokerE2E) {
	if key == int16(kmsg.Fetch) {
		c.fetches.Add(1)
	}
}

func (c *batchCounter) OnProduceBatchWritten(kgo.BrokerMetadata, string, int32, kgo.ProduceBatchMetrics) {
	c.produced.Add(1)
}

func (c *batchCounter) OnFetchBatchRead(kgo.BrokerMetadata, string, int32, kgo.FetchBatchMetrics) {
	c.fetched.Add(1)
}

// profileTop records a CPU profile of the broker at httpAddr for d while
// load runs, and returns the top entries of `go tool pprof -top`.
func profileTop(ctx context.Context, httpAddr, binary, dir, name string, d time.Duration, load func() error) (string, error) {
	file := filepath.Join(dir, name+".pprof")
	got := make(chan error, 1)
	go func() { // the profile request; ends after d or with ctx
		got <- fetchProfile(ctx, httpAddr, file, d)
	}()
	lerr := load()
	perr := <-got
	if lerr != nil {
		return "", lerr
	}
	if perr != nil {
		return "", perr
	}
	flat, err := pprofTop(ctx, binary, file, "-top", "-nodecount=15")
	if err != nil {
		return "", err
	}
	// The flat view names the leaves (system calls, CRC, memory); the
	// cumulative view of Klassik's own functions names the paths that
	// lead there.
	cum, err := pprofTop(ctx, binary, file, "-top", "-cum", "-nodecount=15", "-show=klassik/klassik/")
	if err != nil {
		return "", err
	}
	return flat + "\n" + cum, nil
}

// pprofTop runs go tool pprof with args on the profile and returns its
// output without the file, build id, type and time lines.
func pprofTop(ctx context.Context, binary, file string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", append(append([]string{"tool", "pprof"}, args...), binary, file)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %v\n%s", err, out)
	}
	// Keep the duration line and the table; drop the file, build id and
	// time lines.
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "File: ") || strings.HasPrefix(l, "Build ID: ") || strings.HasPrefix(l, "Time: ") || strings.HasPrefix(l, "Type: ") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n"), nil
}

func fetchProfile(ctx context.Context, httpAddr, file string, d time.Duration) error {
	secs := max(1, int(d/time.Second))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", httpAddr, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("CPU profile from %s: %s: %s", httpAddr, resp.Status, body)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profiles records broker 1's CPU profile during acks=1 produce to the
// single-broker topic and during RF=3 acks=all produce (where broker 1
// leads one partition and follows two), each for profileFor at the peak
// rate, and renders the top entries.
func (s *suite) profiles(ctx context.Context) (string, error) {
	const profileFor = 8 * time.Second
	dir, err := os.MkdirTemp("", "klassik-bench-pprof-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	binary := filepath.Join(s.c.buildTo, "kafka-server")
	var b strings.Builder
	b.WriteString("\nCPU profiles of broker 1 (go tool pprof -top, first 15 entries; then -top -cum of Klassik's own functions):\n")
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
	for _, p := range []struct {
		name, title string
		assign      [][]int32
		configs     map[string]string
		acks        kgo.Acks
		rps         float64
	}{
		{"produce", "acks=1 produce, 6 partitions led by broker 1", s.c.onOneBroker(oneBrokerPartitions), nil, kgo.LeaderAck(), median(s.produceRPS.k)},
		{"rf3", "RF=3 acks=all produce, broker 1 leads 1 of 3 partitions and follows 2", s.c.roundRobin(rfPartitions, 3), map[string]string{"min.insync.replicas": "2"}, kgo.AllISRAcks(), median(s.rf3RPS)},
	} {
		if p.rps <= 0 || (p.name == "rf3" && len(s.c.brokers) < 3) {
			continue
		}
		topic := "bench-profile-" + p.name + "-" + suffix
		if err := s.c.createTopic(ctx, topic, p.assign, p.configs); err != nil {
			return b.String(), err
		}
		n := int(p.rps * (profileFor + 2*time.Second).Seconds())
		top, err := profileTop(ctx, s.c.httpAddrs[0], binary, dir, p.name, profileFor, func() error {
			_, err := produceClosed(ctx, s.c.seeds, topic, s.value, n, p.acks, nil)
			return err
		})
		s.c.deleteTopics(ctx, topic)
		if err != nil {
			return b.String(), fmt.Errorf("profile %s: %w", p.name, err)
		}
		fmt.Fprintf(&b, "\n%s:\n\n```\n%s```\n", p.title, top)
		s.logf("profiled %s", p.name)
	}
	return b.String(), nil
}
