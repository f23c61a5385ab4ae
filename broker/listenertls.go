package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
	"github.com/klassik/klassik/config"
)

// loadTLS builds every TLS listener's configuration and the inter-broker
// dialer from the broker's ssl.* keys. Key and trust stores are read here,
// so a wrong path or password stops New with the file named.
//
// A listener's TLS configuration is reloadable (Kafka's SslFactory as a
// ListenerReconfigurable): the socket server gets a configuration whose
// GetConfigForClient hands each new handshake the stores in force, so a
// dynamic change of the listener's ssl.* keys (or an AlterConfigs naming
// an unchanged keystore file that changed on disk) serves new connections
// with the new stores while the open ones continue.
func (b *Broker) loadTLS() error {
	props := b.cfg.SSLProperties()
	b.listenerTLS = map[string]network.ListenerConfig{}
	b.tlsStates = map[string]*listenerTLSState{}
	for _, e := range b.cfg.ListenerEndpoints() {
		if e.SecurityProtocol != "SSL" && e.SecurityProtocol != "SASL_SSL" {
			continue
		}
		st, m, err := newListenerTLSState(props, e.ListenerName, e.SecurityProtocol)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		b.tlsStates[e.ListenerName] = st
		b.listenerTLS[e.ListenerName] = network.ListenerConfig{TLS: st.serverConfig(), PrincipalMapper: m}
	}
	ibl := b.cfg.EffectiveInterBrokerListenerName()
	if p := b.cfg.SecurityProtocolMap()[ibl]; p == "SSL" || p == "SASL_SSL" {
		c, err := security.ClientTLSConfig(security.ListenerProperties(props, ibl), "")
		if err != nil {
			return fmt.Errorf("broker: inter-broker listener %s: %w", ibl, err)
		}
		b.interBrokerTLS = c
	}
	return nil
}

// listenerTLSState is one TLS listener's stores in force.
type listenerTLSState struct {
	listener, protocol string
	cur                atomic.Pointer[tls.Config]

	// mu serializes reloads and guards the following.
	mu    sync.Mutex
	props map[string]string    // the listener's resolved ssl.* in force
	files map[string]fileStamp // keystore / truststore files as loaded
	leaf  *x509.Certificate    // the key store's certificate in force
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func newListenerTLSState(props map[string]string, listener, protocol string) (*listenerTLSState, *security.SslPrincipalMapper, error) {
	st := &listenerTLSState{listener: listener, protocol: protocol}
	c, m, err := security.ServerTLSConfigFor(props, listener, protocol)
	if err != nil {
		return nil, nil, err
	}
	st.install(props, c)
	return st, m, nil
}

// listenerSSLProps is the listener's view of the ssl.* keys.
func listenerSSLProps(props map[string]string, listener string) map[string]string {
	out := map[string]string{}
	for k, v := range security.ListenerProperties(props, listener) {
		if strings.HasPrefix(k, "ssl.") {
			out[k] = v
		}
	}
	return out
}

func (st *listenerTLSState) install(props map[string]string, c *tls.Config) {
	st.props = listenerSSLProps(props, st.listener)
	st.files = stampFiles(st.props)
	st.leaf = leafOf(c)
	st.cur.Store(c)
}

// serverConfig is the configuration the socket server's listener holds.
func (st *listenerTLSState) serverConfig() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return st.cur.Load(), nil }}
}

func stampFiles(props map[string]string) map[string]fileStamp {
	out := map[string]fileStamp{}
	for _, k := range []string{security.KeySSLKeystoreLocation, security.KeySSLTruststoreLocation} {
		if p := props[k]; p != "" {
			if fi, err := os.Stat(p); err == nil {
				out[p] = fileStamp{fi.ModTime(), fi.Size()}
			}
		}
	}
	return out
}

func leafOf(c *tls.Config) *x509.Certificate {
	if c == nil || len(c.Certificates) == 0 {
		return nil
	}
	cert := c.Certificates[0]
	if cert.Leaf != nil {
		return cert.Leaf
	}
	if len(cert.Certificate) == 0 {
		return nil
	}
	l, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil
	}
	return l
}

// build makes the listener's configuration for props and checks it
// against the one in force as Kafka's SslFactory does. It returns nil, nil
// when nothing changed (same keys, and with onlyChangedFiles the same
// files on disk too).
func (st *listenerTLSState) buildLocked(props map[string]string, onlyChangedFiles bool) (*tls.Config, error) {
	lp := listenerSSLProps(props, st.listener)
	if maps.Equal(lp, st.props) && (!onlyChangedFiles || maps.Equal(stampFiles(lp), st.files)) {
		return nil, nil
	}
	c, _, err := security.ServerTLSConfigFor(props, st.listener, st.protocol)
	if err != nil {
		return nil, fmt.Errorf("Validation of dynamic config update of SSLFactory failed: %w", err)
	}
	if err := ensureCompatibleKeystore(st.leaf, leafOf(c)); err != nil {
		return nil, fmt.Errorf("Validation of dynamic config update of SSLFactory failed: org.apache.kafka.common.config.ConfigException: %w", err)
	}
	return c, nil
}

// ensureCompatibleKeystore is Kafka's CertificateEntries.ensureCompatible:
// a new key store must keep the subject DN and at least the subject
// alternative names of the current one, so clients that verify the
// broker's identity keep connecting.
func ensureCompatibleKeystore(old, new *x509.Certificate) error {
	if old == nil || new == nil {
		return nil
	}
	odn, _ := security.DistinguishedName(old)
	ndn, _ := security.DistinguishedName(new)
	if odn != ndn {
		return fmt.Errorf("Keystore DistinguishedName does not match:  existing={DN=%s}, new={DN=%s}", odn, ndn)
	}
	oldSAN, newSAN := subjectAltNames(old), subjectAltNames(new)
	for _, s := range oldSAN {
		if !slices.Contains(newSAN, s) {
			return fmt.Errorf("Keystore SubjectAltNames do not match:  existing={SAN=[%s]}, new={SAN=[%s]}", strings.Join(oldSAN, ", "), strings.Join(newSAN, ", "))
		}
	}
	return nil
}

func subjectAltNames(c *x509.Certificate) []string {
	var out []string
	for _, d := range c.DNSNames {
		out = append(out, "[2, "+d+"]")
	}
	for _, ip := range c.IPAddresses {
		out = append(out, "[7, "+ip.String()+"]")
	}
	for _, e := range c.EmailAddresses {
		out = append(out, "[1, "+e+"]")
	}
	for _, u := range c.URIs {
		out = append(out, "[6, "+u.String()+"]")
	}
	slices.Sort(out)
	return out
}

// reload installs the listener's stores for props; see buildLocked.
func (st *listenerTLSState) reload(props map[string]string, onlyChangedFiles bool) (changed bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	c, err := st.buildLocked(props, onlyChangedFiles)
	if err != nil || c == nil {
		return false, err
	}
	st.install(props, c)
	return true, nil
}

func (st *listenerTLSState) validate(props map[string]string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, err := st.buildLocked(props, false)
	return err
}

// ValidateListenerTLS checks that new's ssl.* keys of every TLS listener
// load and keep the key store's identity (call before making new
// current).
func (b *Broker) ValidateListenerTLS(new *config.Config) error {
	props := new.SSLProperties()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(b.tlsStates)) {
		if err := b.tlsStates[name].validate(props); err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// ReloadUpdatedFilesWithoutConfigChange is Kafka's
// DynamicBrokerConfig.reloadUpdatedFilesWithoutConfigChange: an
// AlterConfigs that names a listener's keystore or truststore location
// with its current value reloads the file when it changed on disk. keys
// are the config names of the request.
func (b *Broker) ReloadUpdatedFilesWithoutConfigChange(keys []string) error {
	props := b.dyn.Current().SSLProperties()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(b.tlsStates)) {
		prefix := "listener.name." + strings.ToLower(name) + "."
		named := false
		for _, k := range keys {
			base := strings.TrimPrefix(k, prefix)
			if base == security.KeySSLKeystoreLocation || base == security.KeySSLTruststoreLocation {
				named = true
			}
		}
		if !named {
			continue
		}
		changed, err := b.tlsStates[name].reload(props, true)
		if err != nil {
			errs = append(errs, fmt.Errorf("listener %s: %w", name, err))
			continue
		}
		if changed {
			b.logger.Info("reloaded the listener's key and trust stores from their files", "listener", name)
		}
	}
	return errors.Join(errs...)
}

// subscribeListenerTLS reloads each TLS listener's stores when its ssl.*
// keys change; nil when the broker has no TLS listener.
func (b *Broker) subscribeListenerTLS(d *config.Dynamic) func() {
	if len(b.tlsStates) == 0 {
		return nil
	}
	return d.Subscribe(nil, func(_, nc *config.Config) {
		props := nc.SSLProperties()
		for _, name := range slices.Sorted(maps.Keys(b.tlsStates)) {
			changed, err := b.tlsStates[name].reload(props, false)
			switch {
			case err != nil:
				b.logger.Error("dynamic TLS update refused; the listener keeps its stores", "listener", name, "err", err)
			case changed:
				b.logger.Info("listener TLS stores updated; new connections use them", "listener", name)
			}
		}
	})
}
