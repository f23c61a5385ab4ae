package broker

import (
	"fmt"

	"github.com/klassik/klassik/broker/network"
	"github.com/klassik/klassik/broker/security"
)

// loadTLS builds every TLS listener's configuration and the inter-broker
// dialer from the broker's ssl.* keys. Key and trust stores are read here,
// so a wrong path or password stops New with the file named.
func (b *Broker) loadTLS() error {
	props := b.cfg.SSLProperties()
	b.listenerTLS = map[string]network.ListenerConfig{}
	for _, e := range b.cfg.ListenerEndpoints() {
		if e.SecurityProtocol != "SSL" && e.SecurityProtocol != "SASL_SSL" {
			continue
		}
		c, m, err := security.ServerTLSConfigFor(props, e.ListenerName, e.SecurityProtocol)
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		b.listenerTLS[e.ListenerName] = network.ListenerConfig{TLS: c, PrincipalMapper: m}
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
