package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"

	"github.com/klassik/klassik/config"
	"github.com/klassik/klassik/zkpaths"
	"github.com/klassik/klassik/zkpaths/zkclient"
)

const usageMessage = "ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up ZooKeeper authentication."

var specs = append([]admintool.Spec{
	{Name: "zookeeper.acl", HasArg: true, ArgName: "String", Help: "Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are 'secure' and 'unsecure'"},
	{Name: "zookeeper.connect", HasArg: true, ArgName: "String", Help: "Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated list of host:port pairs. (default: localhost:2181)"},
	{Name: "zookeeper.session.timeout", HasArg: true, ArgName: "Integer", Help: "Sets the ZooKeeper session timeout. (default: 30000)"},
	{Name: "zookeeper.connection.timeout", HasArg: true, ArgName: "Integer", Help: "Sets the ZooKeeper connection timeout. (default: 30000)"},
	{Name: "enable.path.check", Help: "Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command."},
	{Name: "zk-tls-config-file", HasArg: true, ArgName: "String: ZooKeeper TLS configuration", Help: "Identifies the file where ZooKeeper client TLS connectivity properties are defined.  Any properties other than " +
		strings.Join(config.ZooKeeperTLSKeys, ", ") + " are ignored."},
}, admintool.HelpSpecs...)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("KAFKA_OPTS"), os.Stdout, os.Stderr))
}

// request is a validated command line.
type request struct {
	secure            bool
	connect           string
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
	pathCheck         bool
	tls               security.ZooKeeperSecurity
}

// errIncorrectConfiguration is Kafka's IllegalArgumentException("Incorrect
// configuration"), printed by main as the JVM prints an uncaught one.
var errIncorrectConfiguration = errors.New("Incorrect configuration")

// errExit ends the tool with status 1 after what it printed itself.
var errExit = errors.New("exit 1")

func run(args []string, kafkaOpts string, stdout, stderr io.Writer) int {
	o, special, err := admintool.ParseAdminCommand(specs, args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, usageMessage, specs, stdout, stderr); done {
		return code
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	sys := security.SystemProperties(kafkaOpts)
	req, err := parse(o, sys)
	if err != nil {
		if code, done := admintool.CommandLine("", err, admintool.UsageAndDie, usageMessage, specs, stdout, stderr); done {
			return code
		}
		fmt.Fprintln(stderr, javaException(err))
		return 1
	}
	login, jaasFile, err := security.ZooKeeperLoginFromSystemProperties(sys)
	if err != nil {
		fmt.Fprintln(stderr, javaException(err))
		return 1
	}
	tlsAuth := req.tls.TLSClientAuth()
	if jaasFile == "" && !tlsAuth {
		fmt.Fprintln(stderr, "ERROR: No JAAS configuration file has been specified and no TLS client certificate has been specified. "+
			"Please make sure that you set the system property java.security.auth.login.config or provide a ZooKeeper client TLS "+
			"configuration via --zk-tls-config-file <filename> identifying at least zookeeper.ssl.client.enable, "+
			"zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location")
		fmt.Fprintln(stderr, javaException(errIncorrectConfiguration))
		return 1
	}
	if !tlsAuth && login == nil {
		fmt.Fprintf(stdout, "ERROR: Security isn't enabled, most likely the file isn't set properly: %s\n", jaasFile)
		fmt.Fprintln(stderr, javaException(errIncorrectConfiguration))
		return 1
	}
	opts, err := security.ZooKeeperClientOptions(req.tls, req.secure, login)
	if err != nil {
		fmt.Fprintln(stderr, javaException(err))
		return 1
	}
	opts = append(opts, zkclient.WithConnectTimeout(req.connectionTimeout))
	zc, err := zkclient.Connect(req.connect, req.sessionTimeout, opts...)
	if err != nil {
		fmt.Fprintln(stderr, javaException(err))
		return 1
	}
	defer zc.Close()
	if err := migrate(context.Background(), zc, req.pathCheck, stdout, stderr); err != nil {
		if !errors.Is(err, errExit) {
			fmt.Fprintln(stderr, javaException(err))
		}
		return 1
	}
	return 0
}

func parse(o *admintool.Options, sys map[string]string) (*request, error) {
	req := &request{connect: "localhost:2181", sessionTimeout: 30 * time.Second, connectionTimeout: 30 * time.Second,
		pathCheck: o.Has("enable.path.check")}
	switch o.Value("zookeeper.acl") {
	case "secure":
		req.secure = true
	case "unsecure":
	default:
		return nil, admintool.Usagef("%s", usageMessage)
	}
	if v, ok := o.Lookup("zookeeper.connect"); ok {
		req.connect = v
	}
	for _, t := range []struct {
		name string
		d    *time.Duration
	}{{"zookeeper.session.timeout", &req.sessionTimeout}, {"zookeeper.connection.timeout", &req.connectionTimeout}} {
		if v, ok := o.Lookup(t.name); ok {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, admintool.Usagef("Cannot parse argument '%s' of option %s", v, t.name)
			}
			*t.d = time.Duration(n) * time.Millisecond
		}
	}
	// ZooKeeper's client system properties in KAFKA_OPTS, overridden by
	// the file's Kafka-named keys (createZkClientConfigFromFile).
	props := security.ZooKeeperTLSFromSystemProperties(sys)
	if f, ok := o.Lookup("zk-tls-config-file"); ok {
		file, err := admintool.LoadProperties(f)
		if err != nil {
			return nil, err
		}
		for k, v := range file {
			props[k] = v
		}
	}
	var err error
	if req.tls, err = config.ZooKeeperSecurityFromProperties(props); err != nil {
		return nil, err
	}
	return req, nil
}

// javaException renders err as the uncaught exception Kafka's tool would
// print (its main prints the stack trace and exits 1).
func javaException(err error) string {
	if errors.Is(err, errIncorrectConfiguration) {
		return "java.lang.IllegalArgumentException: " + err.Error()
	}
	return admintool.JavaString(err)
}

// aclStore is the part of zkclient.Client the walk uses.
type aclStore interface {
	Exists(p string) (bool, *zk.Stat, error)
	Children(p string) ([]string, error)
	EnsurePath(p string) error
	SetDefaultACL(p string) error
}

// optionalRoots are secure roots that are only walked when present: the
// controller's ephemeral node (as Kafka), and the Kafka 3.x roots, which a
// 2.8 tree does not have and which must not appear empty in it.
var optionalRoots = map[string]bool{zkpaths.ControllerPath: true, zkpaths.MigrationPath: true, zkpaths.FeaturePath: true}

// migrate is ZkSecurityMigrator.run: the chroot, then each secure root
// recursively.
func migrate(ctx context.Context, zc aclStore, pathCheck bool, stdout, stderr io.Writer) error {
	if err := setACL(zc, "/", stderr); err != nil {
		return err
	}
	var missing []string
	for _, p := range zkpaths.SecureRootPaths {
		ok, _, err := zc.Exists(p)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(stdout, "Warning: The following secure root paths do not exist in ZooKeeper: %s\n", strings.Join(missing, ","))
		fmt.Fprintln(stdout, "That might be due to an incorrect chroot is specified when executing the command.")
		if pathCheck {
			fmt.Fprintln(stdout, "Exit the command.")
			return errExit
		}
	}
	for _, root := range zkpaths.SecureRootPaths {
		if err := ctx.Err(); err != nil {
			return err
		}
		if optionalRoots[root] {
			if ok, _, err := zc.Exists(root); err != nil {
				return err
			} else if !ok {
				continue
			}
		} else if err := zc.EnsurePath(root); err != nil {
			return err
		}
		if err := setRecursively(zc, root, stderr); err != nil {
			return err
		}
	}
	return nil
}

// setRecursively sets p's ACL, then its children's, depth first.
func setRecursively(zc aclStore, p string, stderr io.Writer) error {
	if err := setACL(zc, p, stderr); err != nil {
		return err
	}
	kids, err := zc.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		fmt.Fprintf(stderr, "WARN Node is gone, it could be have been legitimately deleted: %s\n", p)
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := setRecursively(zc, path.Join(p, k), stderr); err != nil {
			return err
		}
	}
	return nil
}

func setACL(zc aclStore, p string, stderr io.Writer) error {
	err := zc.SetDefaultACL(p)
	if errors.Is(err, zk.ErrNoNode) {
		fmt.Fprintf(stderr, "WARN Znode is gone, it could be have been legitimately deleted: %s\n", p)
		return nil
	}
	return err
}
