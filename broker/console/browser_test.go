package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klassik/klassik/broker/testcluster"
)

// chromiumPath is Debian's Chromium (bin/klassik-install-deps.sh installs
// the chromium package).
const chromiumPath = "/usr/bin/chromium"

// refreshBudget is how soon after ZooKeeper shows a change the page
// should show it (two seconds). The page polls POLL_MS after the previous
// poll ended, which TestPagePollsWithinBudget checks; the time the browser
// test measures is logged, not asserted: on a loaded machine a poll's
// requests can take longer than the budget.
const refreshBudget = 2 * time.Second

// artifactsDir is where the test's screenshots go: $KLASSIK_ARTIFACTS/<test>
// when set, else the test's temporary directory (logged).
func artifactsDir(t *testing.T) string {
	dir := t.TempDir()
	if root := os.Getenv("KLASSIK_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// page is a headless Chromium tab that records every uncaught exception,
// console.error call and error log entry (failed requests among them).
type page struct {
	t   *testing.T
	ctx context.Context
	dir string

	// mu guards the following.
	mu   sync.Mutex
	errs []string
}

func newPage(t *testing.T) *page {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s is needed for the console's browser test (Debian package chromium; bin/klassik-install-deps.sh installs it): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1100),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	p := &page{t: t, ctx: ctx, dir: artifactsDir(t)}
	// Console starts the browser and subscribes before the page loads; the
	// reader ends when the tab's context is cancelled, and the cleanup waits
	// for it.
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() { // drains the console stream; ends with ctx
		defer close(done)
		for m, err := range messages {
			if err != nil {
				if ctx.Err() == nil {
					p.addErr("console stream: " + err.Error())
				}
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.addErr(m.String() + " at " + m.URL)
			}
		}
	}()
	t.Cleanup(func() { cancelTab(); cancelAlloc(); <-done })
	return p
}

func (p *page) addErr(msg string) {
	p.mu.Lock()
	p.errs = append(p.errs, msg)
	p.mu.Unlock()
}

func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("chromedp: %v", err)
	}
}

func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("chromedp: evaluating %s: %v", expr, err)
	}
	return v
}

// waitJS waits until the JavaScript expression is true, polling every
// 50ms, and returns how long that took; it fails the test after timeout.
func (p *page) waitJS(what, expr string, timeout time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	for {
		if eval[bool](p, expr) {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			status := eval[string](p, `document.getElementById("status").textContent`)
			p.screenshot("timeout")
			p.mu.Lock()
			errs := strings.Join(p.errs, "\n")
			p.mu.Unlock()
			p.t.Fatalf("page: timed out after %v waiting for %s (%s); status: %s; page errors:\n%s", timeout, what, expr, status, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *page) screenshot(name string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("chromedp: screenshot: %v", err)
	}
	path := filepath.Join(p.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

func (p *page) checkNoErrors() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) > 0 {
		p.t.Fatalf("the page reported %d error(s):\n%s", len(p.errs), strings.Join(p.errs, "\n"))
	}
}

// TestBrowser loads the console in headless Chromium from a broker that
// is not the controller, then, without a reload, watches it follow a
// killed broker (gone from /brokers/ids, out of every ISR) and a killed
// controller (a new controller id and epoch), logging how long after
// ZooKeeper showed it each took. With KLASSIK_UPDATE_SCREENSHOT=1 the screenshot
// after the first kill replaces testdata/console.png (the README's).
func TestBrowser(t *testing.T) {
	c := startConsoleCluster(t, testcluster.Options{Racks: []string{"a", "b", "c"}})
	ctlID, _ := c.Controller()
	serve := (c.Index(ctlID) + 1) % c.N()
	other := (c.Index(ctlID) + 2) % c.N()
	c.CreateTopic("orders", 3, 3, map[string]*string{"index.interval.bytes": ptr("200"), "segment.bytes": ptr("4096")})
	c.WaitLeaders(30*time.Second, "orders", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One uncompressed batch per record, so that the segments roll and
	// the sparse index has entries to draw.
	pr := c.Client(kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	for i := 0; i < 150; i++ {
		v := fmt.Sprintf("order %04d %s", i, strings.Repeat("x", 100))
		if err := pr.ProduceSync(ctx, &kgo.Record{Partition: int32(i % 3), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := c.Client(kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("billing"))
	for got := 0; got < 150; {
		got += cons.PollFetches(ctx).NumRecords()
		if ctx.Err() != nil {
			t.Fatal("consuming:", ctx.Err())
		}
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}

	p := newPage(t)
	p.do(chromedp.Navigate(c.urls[serve] + "/"))
	p.waitJS("three live brokers, the controller and the topic",
		fmt.Sprintf(`document.querySelectorAll('#brokers .broker[data-live="true"]').length === 3 &&
			document.getElementById("controller-id").textContent === "%d" &&
			document.getElementById("controller-epoch").textContent === "%d" &&
			document.querySelectorAll('[data-tp^="orders-"]').length === 3 &&
			document.querySelectorAll('[data-tp^="orders-"] .bar[data-leo="50"]').length === 9 &&
			document.querySelector('#events tbody tr') !== null &&
			document.querySelector('#changes tbody tr') !== null &&
			document.querySelector('#groups [data-group="billing"][data-state="Stable"]') !== null &&
			document.querySelectorAll('#segments .segment').length > 1`, ctlID, c.ControllerEpoch()),
		15*time.Second)
	p.screenshot("1-started")

	// A broker dies: it leaves /brokers/ids and, through the controller,
	// every ISR.
	deadID := c.BrokerID(other)
	c.KillBroker(other)
	c.WaitFor(20*time.Second, "the killed broker out of every ISR in ZooKeeper", func() bool {
		for part := int32(0); part < 3; part++ {
			if s, ok := c.PartitionState("orders", part); !ok || slices.Contains(s.ISR, deadID) {
				return false
			}
		}
		ids, err := c.ZK().GetBrokerIDs()
		return err == nil && !slices.Contains(ids, deadID)
	})
	took := p.waitJS("the dead broker and the shrunk ISRs",
		fmt.Sprintf(`document.querySelector('#brokers .broker[data-broker="%d"][data-live="false"]') !== null &&
			[...document.querySelectorAll('[data-tp^="orders-"]')].every(e => !e.dataset.isr.split(",").includes("%d"))`, deadID, deadID),
		30*time.Second)
	t.Logf("page showed the killed broker and the shrunk ISR %v after ZooKeeper", took)
	if took > refreshBudget {
		t.Logf("(over the %v the page aims for: a loaded machine)", refreshBudget)
	}
	shot := p.screenshot("2-broker-killed")
	if os.Getenv("KLASSIK_UPDATE_SCREENSHOT") == "1" {
		data, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("testdata/console.png", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The controller dies: the serving broker, the last one, takes over
	// with a higher epoch.
	oldEpoch := c.ControllerEpoch()
	cons.Close()
	c.KillBroker(c.Index(ctlID))
	var newEpoch int32
	c.WaitFor(20*time.Second, "a new controller in ZooKeeper", func() bool {
		id, ok := c.Controller()
		newEpoch = c.ControllerEpoch()
		return ok && id == c.BrokerID(serve) && newEpoch > oldEpoch
	})
	took = p.waitJS("the new controller and epoch",
		fmt.Sprintf(`document.getElementById("controller-id").textContent === "%d" &&
			Number(document.getElementById("controller-epoch").textContent) >= %d &&
			document.getElementById("ctl-source").textContent.includes("broker %d")`, c.BrokerID(serve), newEpoch, c.BrokerID(serve)),
		30*time.Second)
	t.Logf("page showed the new controller epoch %v after ZooKeeper", took)
	if took > refreshBudget {
		t.Logf("(over the %v the page aims for: a loaded machine)", refreshBudget)
	}
	p.screenshot("3-controller-failover")
	p.checkNoErrors()
}

// TestPagePollsWithinBudget: the page starts a poll POLL_MS after the
// previous one ended, so a change in ZooKeeper shows within POLL_MS plus
// one poll's requests; POLL_MS leaves at least half of refreshBudget to
// the requests.
func TestPagePollsWithinBudget(t *testing.T) {
	js, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const POLL_MS = (\d+);`).FindSubmatch(js)
	if m == nil {
		t.Fatal("no POLL_MS constant in static/app.js")
	}
	ms, _ := strconv.Atoi(string(m[1]))
	if poll := time.Duration(ms) * time.Millisecond; poll <= 0 || poll > refreshBudget/2 {
		t.Fatalf("POLL_MS %v, want at most %v (half of the %v budget)", poll, refreshBudget/2, refreshBudget)
	}
	if !strings.Contains(string(js), "setTimeout(poll, POLL_MS)") {
		t.Fatal("the page does not schedule its next poll POLL_MS after the previous one")
	}
}
