// Package console is Klassik's live web console: one embedded page (plain
// HTML, JavaScript and CSS, no build step) and the JSON it polls under
// /api/v1/.
//
// Every broker serves the console. The ZooKeeper view (/api/v1/cluster)
// is read by the serving broker's own session. What only one broker knows
// — its local replicas' log end offsets and high watermarks, the groups it
// coordinates, its segments, the controller's history — is asked of that
// broker's console over HTTP by the serving broker, at the URL the broker
// published in its /klassik/console/<id> ephemeral znode (Klassik's own
// znode; Kafka's /brokers/ids JSON is unchanged). A dead broker's znode is
// gone with its session, so the fan-out asks only live brokers, each with a
// short timeout, and says which did not answer; the page always shows the
// current controller's history because /api/v1/controller is proxied to
// the broker /controller names.
//
// Bounds: each request runs under a deadline (handlerTimeout), each peer
// call under peerTimeout; the fan-out's goroutines are joined before the
// handler returns, so nothing outlives a poll; peer bodies are read through
// a maxPeerBody limit and lists are capped (maxPartitions, maxSegments,
// maxIndexEntries).
package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/klassik/klassik/controller"
)

// Limits of one poll.
const (
	handlerTimeout  = 3 * time.Second
	peerTimeout     = 1 * time.Second
	maxPeerBody     = 16 << 20
	MaxPartitions   = 10000
	MaxSegments     = 200
	MaxIndexEntries = 1000
)

//go:embed static
var static embed.FS

// Source is what the console reads from its broker.
type Source interface {
	// BrokerID is the serving broker's id.
	BrokerID() int32
	// Cluster reads the ZooKeeper view, with each live broker's published
	// console URL.
	Cluster(ctx context.Context) (Cluster, error)
	// LocalReplicas lists this broker's replicas.
	LocalReplicas() []Replica
	// History is this broker's controller history.
	History() controller.HistorySnapshot
	// LocalGroups lists the groups this broker coordinates (Lag and
	// HighWatermark are filled by the console: -1 here).
	LocalGroups() []Group
	// Segments describes the local replica of a partition; false when the
	// broker has no log for it.
	Segments(topic string, partition int32) (Segments, bool)
}

type server struct {
	src    Source
	log    *slog.Logger
	client *http.Client
}

// New returns the console's handler: the page at / and the JSON under
// /api/v1/.
func New(src Source, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{src: src, log: logger.With("component", "console"),
		client: &http.Client{Timeout: peerTimeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: peerTimeout,
		}}}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(sub)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.HandleFunc("GET /api/v1/cluster", s.cluster)
	mux.HandleFunc("GET /api/v1/replicas", s.replicas)
	mux.HandleFunc("GET /api/v1/controller", s.controller)
	mux.HandleFunc("GET /api/v1/groups", s.groups)
	mux.HandleFunc("GET /api/v1/segments", s.segments)
	return http.TimeoutHandler(mux, handlerTimeout, `{"error":"timeout"}`)
}

func (s *server) writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.log.Debug("writing a response", "err", err)
	}
}

func (s *server) fail(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func local(r *http.Request) bool { return r.URL.Query().Get("scope") == "local" }

func (s *server) cluster(w http.ResponseWriter, r *http.Request) {
	c, err := s.src.Cluster(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	s.writeJSON(w, c)
}

// peerGet asks a peer's console for path (already carrying scope=local)
// and decodes the answer into v.
func (s *server) peerGet(ctx context.Context, base, path string, v any) error {
	if base == "" {
		return errors.New("no console published")
	}
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxPeerBody)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(body, 512))
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return json.NewDecoder(body).Decode(v)
}

// fanOut runs ask for every live broker (the serving one locally), in
// parallel, and joins them all before returning.
func fanOut[T any](ctx context.Context, s *server, c Cluster, path string, self func() T) ([]PeerStatus, []T) {
	n := len(c.Brokers)
	sts := make([]PeerStatus, n)
	vals := make([]T, n)
	var wg sync.WaitGroup
	for i, b := range c.Brokers {
		sts[i] = PeerStatus{ID: b.ID, OK: true}
		if b.ID == s.src.BrokerID() {
			vals[i] = self()
			continue
		}
		wg.Add(1)
		go func() { // one peer call, bounded by peerTimeout; joined below
			defer wg.Done()
			if err := s.peerGet(ctx, b.Console, path, &vals[i]); err != nil {
				sts[i] = PeerStatus{ID: b.ID, Error: err.Error()}
			}
		}()
	}
	wg.Wait()
	return sts, vals
}

func (s *server) allReplicas(ctx context.Context, c Cluster) Replicas {
	out := Replicas{ServedBy: s.src.BrokerID()}
	sts, vals := fanOut(ctx, s, c, "/api/v1/replicas?scope=local", func() Replicas {
		return Replicas{Replicas: s.src.LocalReplicas()}
	})
	out.Brokers = sts
	for i, v := range vals {
		if sts[i].OK {
			out.Replicas = append(out.Replicas, v.Replicas...)
		}
	}
	sort.Slice(out.Replicas, func(i, j int) bool {
		a, b := out.Replicas[i], out.Replicas[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Broker < b.Broker
	})
	if len(out.Replicas) > 3*MaxPartitions {
		out.Replicas, out.Truncated = out.Replicas[:3*MaxPartitions], true
	}
	return out
}

func (s *server) replicas(w http.ResponseWriter, r *http.Request) {
	if local(r) {
		s.writeJSON(w, Replicas{ServedBy: s.src.BrokerID(), Replicas: s.src.LocalReplicas()})
		return
	}
	c, err := s.src.Cluster(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	s.writeJSON(w, s.allReplicas(r.Context(), c))
}

func (s *server) controller(w http.ResponseWriter, r *http.Request) {
	self := s.src.BrokerID()
	mine := func(ctl int32) Controller {
		return Controller{ServedBy: self, Source: self, Controller: ctl, HistorySnapshot: s.src.History()}
	}
	if local(r) {
		s.writeJSON(w, mine(-1))
		return
	}
	c, err := s.src.Cluster(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	if c.Controller < 0 || c.Controller == self {
		s.writeJSON(w, mine(c.Controller))
		return
	}
	var base string
	for _, b := range c.Brokers {
		if b.ID == c.Controller {
			base = b.Console
		}
	}
	var out Controller
	if err := s.peerGet(r.Context(), base, "/api/v1/controller?scope=local", &out); err != nil {
		out = Controller{Source: -1, Error: fmt.Sprintf("controller %d: %v", c.Controller, err)}
	}
	out.ServedBy, out.Controller = self, c.Controller
	s.writeJSON(w, out)
}

func (s *server) groups(w http.ResponseWriter, r *http.Request) {
	if local(r) {
		s.writeJSON(w, Groups{ServedBy: s.src.BrokerID(), Groups: s.src.LocalGroups()})
		return
	}
	c, err := s.src.Cluster(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	var reps Replicas
	var sts []PeerStatus
	var vals []Groups
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the replicas' fan-out beside the groups'; joined below
		defer wg.Done()
		reps = s.allReplicas(r.Context(), c)
	}()
	sts, vals = fanOut(r.Context(), s, c, "/api/v1/groups?scope=local", func() Groups {
		return Groups{Groups: s.src.LocalGroups()}
	})
	wg.Wait()
	out := Groups{ServedBy: s.src.BrokerID(), Brokers: sts}
	for i, v := range vals {
		if sts[i].OK {
			out.Groups = append(out.Groups, v.Groups...)
		}
	}
	fillLag(out.Groups, reps.Replicas)
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].Group < out.Groups[j].Group })
	s.writeJSON(w, out)
}

// fillLag sets each committed offset's lag behind its partition leader's
// high watermark.
func fillLag(gs []Group, reps []Replica) {
	type key struct {
		t string
		p int32
	}
	hw := map[key]int64{}
	for _, r := range reps {
		if r.IsLeader {
			hw[key{r.Topic, r.Partition}] = r.HighWatermark
		}
	}
	for gi := range gs {
		for oi := range gs[gi].Offsets {
			o := &gs[gi].Offsets[oi]
			o.HighWatermark, o.Lag = -1, -1
			if h, ok := hw[key{o.Topic, o.Partition}]; ok {
				o.HighWatermark, o.Lag = h, max(0, h-o.Committed)
			}
		}
	}
}

func (s *server) segments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	topic := q.Get("topic")
	p, err := strconv.ParseInt(q.Get("partition"), 10, 32)
	if topic == "" || err != nil {
		s.fail(w, http.StatusBadRequest, errors.New("topic= and partition= are required"))
		return
	}
	self := s.src.BrokerID()
	target := self
	if v := q.Get("broker"); v != "" {
		id, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			s.fail(w, http.StatusBadRequest, errors.New("broker= must be a broker id"))
			return
		}
		target = int32(id)
	}
	if target == self || local(r) {
		seg, ok := s.src.Segments(topic, int32(p))
		if !ok {
			s.fail(w, http.StatusNotFound, fmt.Errorf("broker %d has no replica of %s-%d", self, topic, p))
			return
		}
		s.writeJSON(w, seg)
		return
	}
	c, err := s.src.Cluster(r.Context())
	if err != nil {
		s.fail(w, http.StatusServiceUnavailable, err)
		return
	}
	var base string
	found := false
	for _, b := range c.Brokers {
		if b.ID == target {
			base, found = b.Console, true
		}
	}
	if !found {
		s.fail(w, http.StatusNotFound, fmt.Errorf("broker %d is not registered", target))
		return
	}
	var out Segments
	path := "/api/v1/segments?scope=local&topic=" + url.QueryEscape(topic) + "&partition=" + strconv.FormatInt(p, 10)
	if err := s.peerGet(r.Context(), base, path, &out); err != nil {
		s.fail(w, http.StatusBadGateway, fmt.Errorf("broker %d: %w", target, err))
		return
	}
	s.writeJSON(w, out)
}
