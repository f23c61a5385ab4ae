package docker_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths/zkclient"
	"github.com/klassik/klassik/zkpaths/zkserver"
)

func TestMain(m *testing.M) {
	code := zkserver.RunShared(m)
	if dist.dir != "" {
		os.RemoveAll(dist.dir)
	}
	os.Exit(code)
}

// root is the repository root (go test runs in docker/).
const root = ".."

// imageUser is the user the Dockerfile runs as.
const imageUser = "10001:10001"

// dockerBin is the docker client: Debian's docker.io package's
// /usr/bin/docker (what bin/klassik-install-deps.sh installs) when present,
// else the docker on PATH. Its builds use BuildKit (DOCKER_BUILDKIT=1), which
// builds only the stages the target needs, so the golang build stage is
// never pulled.
func dockerBin(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/docker"); err == nil {
		return "/usr/bin/docker"
	}
	p, err := exec.LookPath("docker")
	if err != nil {
		t.Fatal("docker client not found: install Debian's docker.io (bin/klassik-install-deps.sh does)")
	}
	return p
}

// docker runs the docker client and returns its combined output.
func docker(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, dockerBin(t), args...)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=1")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustDocker(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	out, err := docker(t, timeout, args...)
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// requireDaemon fails the test unless a Docker daemon answers.
func requireDaemon(t *testing.T) {
	t.Helper()
	out, err := docker(t, 20*time.Second, "info", "--format", "{{.ServerVersion}}")
	if err != nil || out == "" {
		t.Fatalf("no Docker daemon answers (docker info: %v: %s); start one as root "+
			"(bin/klassik-install-deps.sh installs docker.io and starts dockerd)", err, out)
	}
}

// dist is docker/dist/ as the Dockerfile's BINARIES=host expects it, built
// once per test binary from this checkout: static binaries in libexec/,
// the user's home tree in home/.
var dist struct {
	once sync.Once
	dir  string
	err  error
}

func buildDist(t *testing.T) string {
	t.Helper()
	dist.once.Do(func() {
		dir, err := os.MkdirTemp("", "klassik-docker-dist-")
		if err != nil {
			dist.err = err
			return
		}
		dist.dir = dir
		pkgs := []string{"./docker/klassik-entrypoint"}
		tools, _ := filepath.Glob(filepath.Join(root, "bin", "kafka-*", "*.go"))
		for _, f := range tools {
			p := "./" + filepath.ToSlash(filepath.Dir(must(filepath.Rel(root, f))))
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		args := append([]string{"build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "libexec") + "/"}, pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			dist.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
		dist.err = os.MkdirAll(filepath.Join(dir, "home", "data"), 0o755)
	})
	if dist.err != nil {
		t.Fatal(dist.err)
	}
	return dist.dir
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// composeFile is the part of `docker-compose config` the test reads.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []struct {
			Published int `yaml:"published"`
			Target    int `yaml:"target"`
		} `yaml:"ports"`
		Volumes []string `yaml:"volumes"`
	} `yaml:"services"`
}

// The compose file validates with Debian's docker-compose and describes
// the cluster of the issue: a three-node ZooKeeper ensemble, three brokers
// on racks a, b, c with the console published and their log dirs on
// volumes, and a broker environment the entrypoint accepts.
func TestComposeConfig(t *testing.T) {
	bin, err := exec.LookPath("docker-compose")
	if err != nil {
		t.Fatal("docker-compose not found: install Debian's docker-compose (bin/klassik-install-deps.sh does)")
	}
	cmd := exec.Command(bin, "-f", "docker-compose.yml", "config")
	cmd.Env = append(os.Environ(), "KLASSIK_IMAGE=", "ZOOKEEPER_IMAGE=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, stderr.String())
	}
	var cf composeFile
	if err := yaml.Unmarshal(out, &cf); err != nil {
		t.Fatalf("parse docker-compose config output: %v\n%s", err, out)
	}

	var zk, brokers []string
	for name, s := range cf.Services {
		switch {
		case strings.HasPrefix(s.Image, "zookeeper:"):
			zk = append(zk, name)
		case s.Environment["KAFKA_ZOOKEEPER_CONNECT"] != "":
			brokers = append(brokers, name)
		default:
			t.Errorf("service %s is neither ZooKeeper nor a broker (image %q)", name, s.Image)
		}
	}
	slices.Sort(zk)
	slices.Sort(brokers)
	if len(zk) != 3 || len(brokers) != 3 {
		t.Fatalf("zookeeper services %v, brokers %v; want three of each", zk, brokers)
	}

	var ids []string
	for _, name := range zk {
		env := cf.Services[name].Environment
		ids = append(ids, env["ZOO_MY_ID"])
		servers := strings.Fields(env["ZOO_SERVERS"])
		if len(servers) != 3 {
			t.Errorf("%s: ZOO_SERVERS %q: want three servers", name, env["ZOO_SERVERS"])
		}
		for i, s := range servers {
			if want := fmt.Sprintf("server.%d=%s:2888:3888;2181", i+1, zk[i]); s != want {
				t.Errorf("%s: ZOO_SERVERS entry %q, want %q", name, s, want)
			}
		}
	}
	if !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Errorf("ZOO_MY_ID of %v = %v, want 1, 2, 3", zk, ids)
	}

	entrypoint := filepath.Join(buildDist(t), "libexec", "klassik-entrypoint")
	httpKnown := hasBrokerKey("klassik.http.listener")
	var racks []string
	consolePorts := map[int]bool{}
	for _, name := range brokers {
		s := cf.Services[name]
		env := s.Environment
		racks = append(racks, env["KAFKA_BROKER_RACK"])
		for _, z := range zk {
			if !strings.Contains(env["KAFKA_ZOOKEEPER_CONNECT"], z+":2181") {
				t.Errorf("%s: KAFKA_ZOOKEEPER_CONNECT %q lacks %s", name, env["KAFKA_ZOOKEEPER_CONNECT"], z)
			}
		}
		if !strings.Contains(env["KAFKA_ADVERTISED_LISTENERS"], "://localhost:") {
			t.Errorf("%s: KAFKA_ADVERTISED_LISTENERS %q advertises no listener for host clients", name, env["KAFKA_ADVERTISED_LISTENERS"])
		}
		_, httpPort, _ := strings.Cut(env["KAFKA_KLASSIK_HTTP_LISTENER"], ":")
		for _, p := range s.Ports {
			if strconv.Itoa(p.Target) == httpPort {
				consolePorts[p.Published] = true
			}
		}
		if !slices.ContainsFunc(s.Volumes, func(v string) bool { return strings.Contains(v, ":/var/lib/klassik") }) {
			t.Errorf("%s: volumes %v: no volume for the log dirs (/var/lib/klassik)", name, s.Volumes)
		}

		// The broker environment passes the entrypoint's check, which is
		// the broker's own configuration loader.
		cenv := []string{}
		for k, v := range env {
			if k == "KAFKA_KLASSIK_HTTP_LISTENER" && !httpKnown {
				t.Logf("%s: klassik.http.listener is not a broker key in this build yet; not checked", name)
				continue
			}
			cenv = append(cenv, k+"="+v)
		}
		check := exec.Command(entrypoint, "--check")
		check.Env = cenv
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("%s: klassik-entrypoint --check refuses the environment: %v\n%s", name, err, out)
		}
	}
	if !slices.Equal(racks, []string{"a", "b", "c"}) {
		t.Errorf("racks of %v = %v, want a, b, c", brokers, racks)
	}
	if len(consolePorts) != 3 {
		t.Errorf("console (klassik.http.listener) published on host ports %v, want one per broker", consolePorts)
	}
}

// The image built from host binaries on a scratch base runs three brokers
// configured only through KAFKA_* variables: they register in /brokers/ids
// with their racks, serve a replication-factor-3 topic end to end, and run
// as a non-root user. An unknown variable stops a container at start-up.
func TestBrokerImage(t *testing.T) {
	requireDaemon(t)
	start := time.Now()
	suffix := zkserver.RandomSuffix(8)
	tag := "klassik-test:" + strings.ToLower(suffix)

	// A minimal build context: the Dockerfile, the scripts it copies and
	// the host-built binaries as docker/dist/.
	bctx := t.TempDir()
	for _, dir := range []string{"bin", "docker"} {
		if err := os.MkdirAll(filepath.Join(bctx, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "bin", "*.sh"))
	for _, f := range append(scripts, "Dockerfile", "kafka-run-class.sh") {
		dst := filepath.Join(bctx, "bin", filepath.Base(f))
		if filepath.Dir(f) == "." {
			dst = filepath.Join(bctx, "docker", f)
		}
		copyFile(t, f, dst)
	}
	if out, err := exec.Command("cp", "-a", buildDist(t), filepath.Join(bctx, "docker", "dist")).CombinedOutput(); err != nil {
		t.Fatalf("cp dist: %v\n%s", err, out)
	}
	t.Cleanup(func() { docker(t, time.Minute, "rmi", "-f", tag) })
	mustDocker(t, 3*time.Minute, "build", "-q", "-f", filepath.Join(bctx, "docker", "Dockerfile"),
		"--build-arg", "BINARIES=host", "--build-arg", "RUNTIME_IMAGE=scratch", "-t", tag, bctx)
	t.Logf("image %s built in %v", tag, time.Since(start).Round(time.Millisecond))
	if u := mustDocker(t, 30*time.Second, "image", "inspect", "--format", "{{.Config.User}}", tag); u != imageUser {
		t.Errorf("image user %q, want %q", u, imageUser)
	}

	// An unknown property is refused before the broker starts.
	out, err := docker(t, time.Minute, "run", "--rm", "--network", "none",
		"-e", "KAFKA_ZOOKEEPER_CONNECT=127.0.0.1:2181", "-e", "KAFKA_NO_SUCH_SETTING=1", tag)
	if err == nil || !strings.Contains(out, "no.such.setting (from KAFKA_NO_SUCH_SETTING): unknown configuration") {
		t.Errorf("container with KAFKA_NO_SUCH_SETTING: err %v, output:\n%s", err, out)
	}

	// Arguments that are a command run it instead of the broker.
	if out, err := docker(t, time.Minute, "run", "--rm", "--network", "none", tag, "kafka-topics", "--version"); err != nil || !strings.Contains(out, "Klassik") {
		t.Errorf("docker run %s kafka-topics --version: err %v, output:\n%s", tag, err, out)
	}

	connect := zkserver.ConnectString(t)
	racks := map[int32]string{1: "a", 2: "b", 3: "c"}
	var seeds, names, httpAddrs []string
	// The HTTP listener (metrics, console) is published too once the broker
	// has the key; until then the brokers run without it.
	httpKnown := hasBrokerKey("klassik.http.listener")
	for id := int32(1); id <= 3; id++ {
		port, err := zkserver.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		seeds = append(seeds, addr)
		name := fmt.Sprintf("klassik-test-%s-%d", suffix, id)
		names = append(names, name)
		t.Cleanup(func() {
			if t.Failed() {
				logs, _ := docker(t, 30*time.Second, "logs", "--tail", "60", name)
				t.Logf("docker logs %s:\n%s", name, logs)
			}
			docker(t, time.Minute, "rm", "-f", "-v", name)
		})
		rackVar := "KAFKA_BROKER_RACK"
		if id == 3 {
			rackVar = "KAFKA_CFG_BROKER_RACK" // bitnami's prefix works too
		}
		var extra []string
		if httpKnown {
			hp, err := zkserver.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			httpAddrs = append(httpAddrs, fmt.Sprintf("127.0.0.1:%d", hp))
			extra = append(extra, "-e", "KAFKA_KLASSIK_HTTP_LISTENER="+httpAddrs[len(httpAddrs)-1])
		}
		runArgs := append([]string{"run", "-d", "--name", name, "--network", "host"}, extra...)
		mustDocker(t, time.Minute, append(runArgs,
			"-e", "KAFKA_ZOOKEEPER_CONNECT="+connect,
			"-e", fmt.Sprintf("KAFKA_BROKER_ID=%d", id),
			"-e", rackVar+"="+racks[id],
			"-e", "KAFKA_LISTENERS=PLAINTEXT://"+addr,
			"-e", "KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://"+addr,
			"-e", "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=3",
			"-e", "KAFKA_MIN_INSYNC_REPLICAS=2",
			"-e", "KAFKA_HEAP_OPTS=-Xmx1G", // a JVM option: ignored
			tag)...)
	}

	// Registration in /brokers/ids with the racks.
	zc, err := zkclient.Connect(connect, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		infos, err := zc.GetAllBrokers()
		got := map[int32]string{}
		for _, b := range infos {
			got[b.ID] = b.Rack
		}
		if err == nil && fmt.Sprint(got) == fmt.Sprint(racks) {
			break
		}
		for _, name := range names {
			if st, _ := docker(t, 10*time.Second, "inspect", "--format", "{{.State.Status}}", name); st != "running" {
				t.Fatalf("container %s is %s before registering", name, st)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/brokers/ids: %v (err %v), want %v", got, err, racks)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("three brokers registered %v after start", time.Since(start).Round(time.Millisecond))

	// The broker processes run as the image's user, not root.
	for _, name := range names {
		pid := mustDocker(t, 10*time.Second, "inspect", "--format", "{{.State.Pid}}", name)
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				if f[1] == "0" || f[1] != strings.Split(imageUser, ":")[0] {
					t.Errorf("%s: broker process uid %s, want %s (not root)", name, f[1], imageUser)
				}
			}
		}
	}

	if !httpKnown {
		t.Log("klassik.http.listener is not a broker key in this build yet; the HTTP listener is not checked")
	}
	for _, addr := range httpAddrs {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Errorf("GET http://%s/metrics: %v", addr, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET http://%s/metrics: %s, %d bytes", addr, resp.Status, len(body))
		}
	}

	// A replication-factor-3 topic and a franz-go round trip.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ConsumeTopics("docker-roundtrip"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	res, err := adm.CreateTopic(ctx, 3, 3, nil, "docker-roundtrip")
	if err != nil || res.Err != nil {
		t.Fatalf("create topic: %v / %v", err, res.Err)
	}
	const n = 30
	for i := range n {
		r := &kgo.Record{Topic: "docker-roundtrip", Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("value-%d", i))}
		for {
			err := cl.ProduceSync(ctx, r).FirstErr()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
			time.Sleep(50 * time.Millisecond) // leaders still being elected
		}
	}
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records: %v", len(seen), n, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Key)+"="+string(r.Value)] = true })
	}
	for i := range n {
		if !seen[fmt.Sprintf("%d=value-%d", i, i)] {
			t.Errorf("record %d not consumed", i)
		}
	}
	td, err := adm.ListTopics(ctx, "docker-roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["docker-roundtrip"].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Errorf("partition %d: replicas %v, isr %v; want three of each", p.Partition, p.Replicas, p.ISR)
		}
	}
	t.Logf("round trip done %v after start", time.Since(start).Round(time.Millisecond))
}

func hasBrokerKey(name string) bool {
	return slices.ContainsFunc(config.BrokerKeys(), func(k config.Key) bool { return k.Name == name })
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
