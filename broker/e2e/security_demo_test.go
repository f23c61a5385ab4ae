package e2e_test

// The README's "Securing a cluster" walk-through, run as an operator runs
// it: bin/klassik-secure-demo.sh (keystores by keytool and openssl, SCRAM
// users by kafka-configs.sh, the broker from config/server-secure.properties,
// ACLs by kafka-acls.sh, kcat and the console tools as alice, bob refused)
// in a sandbox: its own directory, a chroot of the shared ZooKeeper and
// free ports. TestSecureDemoREADME keeps the README's commands and the
// script's the same.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klassik/klassik/broker/testcluster/proc"
	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

// TestSecureDemo runs bin/klassik-secure-demo.sh and checks what alice,
// the administrator and bob saw.
func TestSecureDemo(t *testing.T) {
	repo := repoRoot(t)
	requireTool(t, "keytool", "apt-get install -y openjdk-17-jre-headless")
	requireTool(t, "kcat", "apt-get install -y kcat")
	for _, tool := range []string{"kafka-configs", "kafka-acls"} {
		if _, err := os.Stat(filepath.Join(repo, "bin", tool+".sh")); err != nil {
			t.Fatalf("the walk-through needs bin/%s.sh: %v", tool, err)
		}
	}
	build, dir, logs := t.TempDir(), t.TempDir(), t.TempDir()
	buildTools(t, repo, build, "kafka-server", "kafka-configs", "kafka-acls", "kafka-topics", "kafka-console-producer", "kafka-console-consumer")
	var ports []string
	for range 2 {
		p, err := zkserver.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, strconv.Itoa(p))
	}
	env := []string{"KLASSIK_BUILD_DIR=" + build, "LOG_DIR=" + logs, "KLASSIK_SECURE_DIR=" + dir,
		"KLASSIK_SECURE_ZK=" + zkserver.ConnectString(t), "KLASSIK_SECURE_PORTS=" + strings.Join(ports, " ")}
	script := filepath.Join(repo, "bin", "klassik-secure-demo.sh")
	t.Cleanup(func() {
		if out, code, err := proc.Run(90*time.Second, env, script, "stop"); err != nil || code != 0 {
			t.Logf("klassik-secure-demo.sh stop: exit %d, %v\n%s", code, err, out)
		}
		// Whatever still runs (the stop timed out): SIGKILL by pid.
		if b, err := os.ReadFile(filepath.Join(logs, "server-0.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	began := time.Now()
	out, code, err := proc.Run(4*time.Minute, env, script)
	if err != nil || code != 0 {
		t.Fatalf("klassik-secure-demo.sh: exit %d, %v\n%s\nbroker output (tail):\n%s", code, err, proc.TailString(out, 80),
			proc.Tail(filepath.Join(logs, "server-0.out"), 40))
	}
	t.Logf("the walk-through took %v", time.Since(began).Round(time.Millisecond))
	for _, want := range []*regexp.Regexp{
		// kafka-configs.sh --zookeeper --describe prints the stored credential.
		regexp.MustCompile(`(?m)^Configs for user-principal 'alice' are SCRAM-SHA-512=salt=[^,]+,stored_key=[^,]+,server_key=[^,]+,iterations=4096$`),
		regexp.MustCompile(`(?m)^Configs for user-principal 'bob' are SCRAM-SHA-512=salt=[^,]+,stored_key=[^,]+,server_key=[^,]+,iterations=8192$`),
		regexp.MustCompile(`Current ACLs for resource ` + "`" + `ResourcePattern\(resourceType=TOPIC, name=orders, patternType=LITERAL\)` + "`" + `:`),
		regexp.MustCompile(`\(principal=User:alice, host=\*, operation=WRITE, permissionType=ALLOW\)`),
		regexp.MustCompile(`(?m)^Created topic orders\.$`),
		// The same over SASL_SSL as the administrator (--command-config).
		regexp.MustCompile(`(?m)^SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=4096$`),
		regexp.MustCompile(`(?m)^order-1$`),
		regexp.MustCompile(`(?m)^order-2$`),
		regexp.MustCompile(`Processed a total of 2 messages`),
		regexp.MustCompile(`Topic authorization failed`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the walk-through's output lacks %v:\n%s", want, out)
		}
	}
}

// TestSecureDemoREADME: every command of the README's "Securing a cluster"
// block is in bin/klassik-secure-demo.sh, and config/server-secure.properties
// loads.
func TestSecureDemoREADME(t *testing.T) {
	repo := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repo, "bin", "klassik-secure-demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Securing a cluster\n")
	if !ok {
		t.Fatal(`README.md has no "## Securing a cluster" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal(`README's "Securing a cluster" has no sh block`)
	}
	block, _, _ = strings.Cut(block, "\n```")
	joined := func(s string) []string {
		s = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(s, "")
		return strings.Split(s, "\n")
	}
	body := strings.Join(joined(string(script)), "\n")
	lines := joined(block)
	if len(lines) < 20 {
		t.Fatalf("the README's walk-through has %d lines", len(lines))
	}
	for i, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || i == 0 { // line 0 sets the variables the script sets
			continue
		}
		if !strings.Contains(body, line) {
			t.Errorf("README command not in bin/klassik-secure-demo.sh: %s", line)
		}
	}
	cfg, err := config.Load(filepath.Join(repo, "config", "server-secure.properties"), nil)
	if err != nil {
		t.Fatalf("config/server-secure.properties: %v", err)
	}
	_ = cfg
}
