package zksecurity

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/klassik/klassik/config"
)

// zkLoadStores loads the zookeeper.ssl key and trust stores. Interim
// loader (PEM only) until the shared keystore loader (JKS, PKCS12, PEM)
// lands in this package.
func zkLoadStores(t *config.ZooKeeperTLSConfig) (*tls.Config, error) {
	c := &tls.Config{}
	if t.TruststoreLocation != "" {
		if t.TruststoreType != "PEM" {
			return nil, fmt.Errorf("zookeeper.ssl.truststore.type: %s is not supported yet", t.TruststoreType)
		}
		data, err := os.ReadFile(t.TruststoreLocation)
		if err != nil {
			return nil, fmt.Errorf("zookeeper.ssl.truststore.location: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(data) {
			return nil, errors.New("zookeeper.ssl.truststore.location: no certificate in " + t.TruststoreLocation)
		}
	}
	if t.KeystoreLocation != "" {
		if t.KeystoreType != "PEM" {
			return nil, fmt.Errorf("zookeeper.ssl.keystore.type: %s is not supported yet", t.KeystoreType)
		}
		cert, err := tls.LoadX509KeyPair(t.KeystoreLocation, t.KeystoreLocation)
		if err != nil {
			return nil, fmt.Errorf("zookeeper.ssl.keystore.location: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if !t.VerifyHostname {
		roots := c.RootCAs
		c.InsecureSkipVerify = true // the chain is still verified below
		c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("zookeeper sent no certificate")
			}
			certs := make([]*x509.Certificate, len(raw))
			for i, der := range raw {
				cert, err := x509.ParseCertificate(der)
				if err != nil {
					return err
				}
				certs[i] = cert
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, ic := range certs[1:] {
				opts.Intermediates.AddCert(ic)
			}
			_, err := certs[0].Verify(opts)
			return err
		}
	}
	return c, nil
}
