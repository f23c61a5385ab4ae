package scaletest

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// profileDirEnv names a directory: when set, the scenario saves every live
// broker's CPU profile (and goroutine dumps part way through) during
// creation and during the failover, for looking at where a step's time
// goes with go tool pprof. Unset, nothing is profiled.
const profileDirEnv = "KLASSIK_SCALE_PROFILE_DIR"

// profiling is one step's profiles under way; wait ends them.
type profiling struct {
	wg sync.WaitGroup
}

// startProfiles starts, for every running broker, a CPU profile of
// seconds and goroutine dumps after a third and two thirds of it, saved
// as <dir>/<step>-<broker>.cpu and .goroutines-<n>. It returns nil when
// the environment asks for no profiles.
func (s *scenario) startProfiles(step string, seconds int) *profiling {
	dir := os.Getenv(profileDirEnv)
	if dir == "" {
		return nil
	}
	p := &profiling{}
	client := &http.Client{Timeout: time.Duration(seconds+30) * time.Second}
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		if pr := n.Process(); pr == nil || !pr.Running() {
			continue
		}
		base := filepath.Join(dir, fmt.Sprintf("%s-%d", step, n.ID))
		addr := n.HTTPAddr
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			body, err := get(client, "http://"+addr+"/debug/pprof/profile?seconds="+strconv.Itoa(seconds))
			if err != nil {
				s.t.Logf("CPU profile of %s: %v", addr, err)
				return
			}
			_ = os.WriteFile(base+".cpu", []byte(body), 0o644)
		}()
		go func() {
			defer p.wg.Done()
			for k := 1; k <= 2; k++ {
				time.Sleep(time.Duration(seconds) * time.Second / 3)
				body, err := get(client, "http://"+addr+"/debug/pprof/goroutine?debug=1")
				if err != nil {
					return
				}
				_ = os.WriteFile(base+".goroutines-"+strconv.Itoa(k), []byte(body), 0o644)
			}
		}()
	}
	return p
}

// wait waits for the profiles (nil: none were started).
func (p *profiling) wait() {
	if p != nil {
		p.wg.Wait()
	}
}

// saveOutputs copies every broker's output (server.out) so far to
// <dir>/<step>-<broker>.out when the environment asks for profiles: the
// controller's failover phases, the brokers' slow LeaderAndIsr lines and
// the state-change lines of a step, beside its profiles.
func (s *scenario) saveOutputs(step string) {
	dir := os.Getenv(profileDirEnv)
	if dir == "" {
		return
	}
	for i := 0; i < s.c.N(); i++ {
		n := s.c.Node(i)
		data, err := os.ReadFile(n.Output)
		if err != nil {
			s.t.Logf("output of broker %d: %v", n.ID, err)
			continue
		}
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.out", step, n.ID)), data, 0o644)
	}
}
