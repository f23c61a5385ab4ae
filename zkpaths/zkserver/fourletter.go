package zkserver

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Parsers for the four-letter words a test reads a server's sessions,
// ephemeral nodes and watches from (ZooKeeper 3.8's output; writeConfig
// whitelists every word with 4lw.commands.whitelist=*). A server knows only
// the watches of the clients connected to it, so the Ensemble methods ask
// every member.

// DumpInfo is what "dump" reports: the live sessions and, per session, its
// ephemeral nodes (absolute paths, chroot included).
type DumpInfo struct {
	Sessions   map[int64]bool
	Ephemerals map[int64][]string
}

// ParseDump reads "dump" output. A leader (or standalone server) lists its
// sessions under "Session Sets" by expiry bucket, a follower under "Global
// Sessions(N)" with their timeouts; both list "Sessions with Ephemerals".
func ParseDump(out string) (DumpInfo, error) {
	d := DumpInfo{Sessions: map[int64]bool{}, Ephemerals: map[int64][]string{}}
	if !strings.HasPrefix(out, "SessionTracker dump:") {
		return d, fmt.Errorf("zkserver: not a dump reply: %.80q", out)
	}
	section := ""
	var owner int64
	haveOwner := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Session Sets"), strings.HasPrefix(line, "Global Sessions"):
			section = "sessions"
			continue
		case strings.HasPrefix(line, "Sessions with Ephemerals"):
			section, haveOwner = "ephemerals", false
			continue
		case strings.HasPrefix(line, "ephemeral nodes dump"), strings.HasPrefix(line, "Connections dump"),
			strings.HasPrefix(line, "Connections with Ephemerals"), strings.HasPrefix(line, "Connections Sets"):
			section = ""
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch section {
		case "sessions":
			// "\t0x..." (leader) or "0x...\t5000ms" (follower); bucket
			// headers ("1 expire at ...:") are skipped.
			if id, ok := parseSessionID(f[0]); ok {
				d.Sessions[id] = true
			}
		case "ephemerals":
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ") {
				if !haveOwner || !strings.HasPrefix(f[0], "/") {
					return d, fmt.Errorf("zkserver: dump: ephemeral %q outside a session", line)
				}
				d.Ephemerals[owner] = append(d.Ephemerals[owner], f[0])
				continue
			}
			id, ok := parseSessionID(strings.TrimSuffix(f[0], ":"))
			if !ok {
				return d, fmt.Errorf("zkserver: dump: bad session line %q", line)
			}
			owner, haveOwner = id, true
		}
	}
	for _, p := range d.Ephemerals {
		sort.Strings(p)
	}
	return d, sc.Err()
}

// ParseWatchesBySession reads "wchc" output: each session id followed by the
// paths it watches, one per tab-indented line. ZooKeeper 3.8 reports data
// and exists watches only (DataTree's dataWatches); child watches appear in
// no four-letter word.
func ParseWatchesBySession(out string) (map[int64][]string, error) {
	m := map[int64][]string{}
	var owner int64
	haveOwner := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, "\t") {
			if !haveOwner {
				return nil, fmt.Errorf("zkserver: wchc: path %q outside a session", line)
			}
			m[owner] = append(m[owner], strings.TrimSpace(line))
			continue
		}
		id, ok := parseSessionID(strings.TrimSpace(line))
		if !ok {
			return nil, fmt.Errorf("zkserver: wchc: bad session line %q", line)
		}
		owner, haveOwner = id, true
		if _, dup := m[owner]; !dup {
			m[owner] = nil
		}
	}
	for _, p := range m {
		sort.Strings(p)
	}
	return m, sc.Err()
}

// ConnInfo is one client connection of "cons": the remote address, the
// session it runs (0 before the handshake) and its negotiated session
// timeout.
type ConnInfo struct {
	Remote    string
	SessionID int64
	Timeout   time.Duration
}

// ParseCons reads "cons" output, one connection per line:
// " /127.0.0.1:46734[1](queued=0,...,sid=0x2000319bde30000,...,to=5000,...)".
func ParseCons(out string) ([]ConnInfo, error) {
	var conns []ConnInfo
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		open := strings.IndexByte(line, '(')
		if open < 0 || !strings.HasSuffix(line, ")") {
			return nil, fmt.Errorf("zkserver: cons: bad line %q", line)
		}
		c := ConnInfo{Remote: line[:open]}
		if i := strings.IndexByte(c.Remote, '['); i >= 0 {
			c.Remote = c.Remote[:i]
		}
		c.Remote = strings.TrimPrefix(c.Remote, "/")
		for _, kv := range strings.Split(line[open+1:len(line)-1], ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "sid":
				id, ok := parseSessionID(v)
				if !ok {
					return nil, fmt.Errorf("zkserver: cons: bad sid in %q", line)
				}
				c.SessionID = id
			case "to":
				ms, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("zkserver: cons: bad timeout in %q", line)
				}
				c.Timeout = time.Duration(ms) * time.Millisecond
			}
		}
		conns = append(conns, c)
	}
	return conns, sc.Err()
}

// parseSessionID reads "0x2000319bde30000".
func parseSessionID(s string) (int64, bool) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || len(h) > 16 {
		return 0, false
	}
	u, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return 0, false
	}
	return int64(u), true
}

// Dump reads "dump" from the current leader (every member replicates the
// sessions and ephemerals, but the leader's session tracker decides expiry).
func (e *Ensemble) Dump() (DumpInfo, error) {
	i, err := e.Leader(5 * time.Second)
	if err != nil {
		return DumpInfo{}, err
	}
	out, err := FourLetterWord(e.Servers[i].Addr(), "dump", 2*time.Second)
	if err != nil {
		return DumpInfo{}, err
	}
	return ParseDump(out)
}

// Watches returns every member's "wchc" merged: session id -> watched
// paths (absolute, sorted). A session's watches live on the member it is
// connected to.
func (e *Ensemble) Watches() (map[int64][]string, error) {
	all := map[int64][]string{}
	for _, s := range e.Servers {
		out, err := FourLetterWord(s.Addr(), "wchc", 2*time.Second)
		if err != nil {
			return nil, fmt.Errorf("zkserver: wchc on %s: %w", s.Addr(), err)
		}
		m, err := ParseWatchesBySession(out)
		if err != nil {
			return nil, err
		}
		for id, paths := range m {
			all[id] = append(all[id], paths...)
			sort.Strings(all[id])
		}
	}
	return all, nil
}

// Connections returns every member's "cons" concatenated.
func (e *Ensemble) Connections() ([]ConnInfo, error) {
	var all []ConnInfo
	for _, s := range e.Servers {
		out, err := FourLetterWord(s.Addr(), "cons", 2*time.Second)
		if err != nil {
			return nil, fmt.Errorf("zkserver: cons on %s: %w", s.Addr(), err)
		}
		c, err := ParseCons(out)
		if err != nil {
			return nil, err
		}
		all = append(all, c...)
	}
	return all, nil
}
