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
// with the new stores while the open ones continue. The inter-broker
// listener's stores are also the ones this broker presents and trusts
// when it dials other brokers (replica fetchers, the controller's
// channel), and they follow the same reloads, as Kafka registers those
// clients' channel builders as reconfigurable: after a rotation every new
// inter-broker connection uses the new certificate and trust store.
func (b *Broker) loadTLS() error {
	props := b.cfg.SSLProperties()
	b.listenerTLS = map[string]network.ListenerConfig{}
	b.tlsStates = map[string]*listenerTLSState{}
	ibl := b.cfg.EffectiveInterBrokerListenerName()
	for _, e := range b.cfg.ListenerEndpoints() {
		if e.SecurityProtocol != "SSL" && e.SecurityProtocol != "SASL_SSL" {
			continue
		}
		st, m, err := newListenerTLSState(props, e.ListenerName, e.SecurityProtocol, e.ListenerName == ibl)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		b.tlsStates[e.ListenerName] = st
		b.listenerTLS[e.ListenerName] = network.ListenerConfig{TLS: st.serverConfig(), PrincipalMapper: m}
	}
	if p := b.cfg.SecurityProtocolMap()[ibl]; p == "SSL" || p == "SASL_SSL" {
		st, ok := b.tlsStates[ibl]
		if !ok {
			return fmt.Errorf("broker: inter-broker listener %s (%s) is not among the listeners", ibl, p)
		}
		b.interBrokerTLS = st.clientConfig
	}
	return nil
}

// listenerTLSState is one TLS listener's stores in force.
type listenerTLSState struct {
	listener, protocol string
	cur                atomic.Pointer[tls.Config]
	// interBroker: the broker dials other brokers with this listener's
	// stores, kept in client (nil for another listener).
	interBroker bool
	client      atomic.Pointer[tls.Config]

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

func newListenerTLSState(props map[string]string, listener, protocol string, interBroker bool) (*listenerTLSState, *security.SslPrincipalMapper, error) {
	st := &listenerTLSState{listener: listener, protocol: protocol, interBroker: interBroker}
	c, m, err := security.ServerTLSConfigFor(props, listener, protocol)
	if err != nil {
		return nil, nil, err
	}
	client, err := st.buildClient(props)
	if err != nil {
		return nil, nil, fmt.Errorf("inter-broker listener %s: %w", listener, err)
	}
	st.install(props, tlsConfigs{c, client})
	return st, m, nil
}

// tlsConfigs are a listener's server configuration and, for the
// inter-broker listener, the client configuration of its dials.
type tlsConfigs struct{ server, client *tls.Config }

// buildClient makes the inter-broker client configuration for props (nil
// for another listener).
func (st *listenerTLSState) buildClient(props map[string]string) (*tls.Config, error) {
	if !st.interBroker {
		return nil, nil
	}
	return security.ClientTLSConfig(security.ListenerProperties(props, st.listener), "")
}

// clientConfig is the configuration of the next inter-broker dial.
func (st *listenerTLSState) clientConfig() *tls.Config { return st.client.Load() }

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

func (st *listenerTLSState) install(props map[string]string, c tlsConfigs) {
	st.props = listenerSSLProps(props, st.listener)
	st.files = stampFiles(st.props)
	st.leaf = leafOf(c.server)
	st.cur.Store(c.server)
	if st.interBroker {
		st.client.Store(c.client)
	}
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

// buildLocked makes the listener's configurations for props and checks
// them against the ones in force as Kafka's SslFactory does. ok is false
// when nothing changed (same keys, and with onlyChangedFiles the same
// files on disk too).
func (st *listenerTLSState) buildLocked(props map[string]string, onlyChangedFiles bool) (c tlsConfigs, ok bool, err error) {
	lp := listenerSSLProps(props, st.listener)
	if maps.Equal(lp, st.props) && (!onlyChangedFiles || maps.Equal(stampFiles(lp), st.files)) {
		return c, false, nil
	}
	if c.server, _, err = security.ServerTLSConfigFor(props, st.listener, st.protocol); err != nil {
		return c, false, fmt.Errorf("Validation of dynamic config update of SSLFactory failed: %w", err)
	}
	if err := ensureCompatibleKeystore(st.leaf, leafOf(c.server)); err != nil {
		return c, false, fmt.Errorf("Validation of dynamic config update of SSLFactory failed: org.apache.kafka.common.config.ConfigException: %w", err)
	}
	if c.client, err = st.buildClient(props); err != nil {
		return c, false, fmt.Errorf("Validation of dynamic config update of SSLFactory failed: %w", err)
	}
	return c, true, nil
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
	c, ok, err := st.buildLocked(props, onlyChangedFiles)
	if err != nil || !ok {
		return false, err
	}
	st.install(props, c)
	return true, nil
}

func (st *listenerTLSState) validate(props map[string]string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, _, err := st.buildLocked(props, false)
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
