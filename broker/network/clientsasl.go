package network

// The client side of SASL for inter-broker connections (Kafka's
// SaslClientAuthenticator as the broker's own NetworkClients use it):
// after the dial, SaslHandshake v1 names the mechanism
// (sasl.mechanism.inter.broker.protocol) and SaslAuthenticate carries the
// tokens of franz-go's PLAIN or SCRAM client with the broker's JAAS
// username and password. Every inter-broker connection (replica fetchers,
// the controller's channels, transaction markers, controlled shutdown)
// dials through an InterBrokerDialer, so none reaches a SASL listener
// unauthenticated.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASLClient is a broker's own SASL login: the mechanism and the
// username/password of its JAAS login module.
type SASLClient struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Username  string
	Password  string
}

// ErrSASLAuthentication wraps a SASL failure the peer reported.
var ErrSASLAuthentication = errors.New("network: SASL authentication failed")

func (s *SASLClient) mechanism() (sasl.Mechanism, error) {
	switch s.Mechanism {
	case "PLAIN":
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("network: SASL mechanism %q is not supported", s.Mechanism)
}

// AuthenticateSASL runs the SASL exchange on a fresh connection: a
// SaslHandshake v1 then SaslAuthenticate (v1) until the mechanism is done.
// A failure closes the client.
func (c *Client) AuthenticateSASL(ctx context.Context, s *SASLClient) error {
	err := c.authenticateSASL(ctx, s)
	if err != nil {
		c.Close()
	}
	return err
}

func (c *Client) authenticateSASL(ctx context.Context, s *SASLClient) error {
	mech, err := s.mechanism()
	if err != nil {
		return err
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = mech.Name()
	kresp, err := c.Request(ctx, hs)
	if err != nil {
		return err
	}
	if hr := kresp.(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		return fmt.Errorf("%w: SaslHandshake for %s with %s: %w (enabled: %v)", ErrSASLAuthentication, mech.Name(), c.addr, kerr.ErrorForCode(hr.ErrorCode), hr.SupportedMechanisms)
	}
	session, msg, err := mech.Authenticate(ctx, c.addr)
	if err != nil {
		return err
	}
	for {
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.Version = 1
		au.SASLAuthBytes = msg
		kresp, err := c.Request(ctx, au)
		if err != nil {
			return err
		}
		ar := kresp.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 {
			text := ""
			if ar.ErrorMessage != nil {
				text = ": " + *ar.ErrorMessage
			}
			return fmt.Errorf("%w: %s with %s as %s: %w%s", ErrSASLAuthentication, mech.Name(), c.addr, s.Username, kerr.ErrorForCode(ar.ErrorCode), text)
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("%w: %s with %s: %w", ErrSASLAuthentication, mech.Name(), c.addr, err)
		}
		if done {
			// PLAIN and SCRAM end with the server's message; nothing
			// is left to send.
			return nil
		}
		msg = next
	}
}

// DialFunc opens an inter-broker connection to addr ("host:port").
type DialFunc func(ctx context.Context, addr, clientID string, timeout time.Duration) (*Client, error)

// InterBrokerDialer dials the inter-broker listener of other brokers: TLS
// when tlsCfg is set (SSL, SASL_SSL; called at every dial, so a reloaded
// key or trust store serves the next connection), then the SASL login
// when s is set (SASL_PLAINTEXT, SASL_SSL). The login is bounded by
// timeout.
func InterBrokerDialer(tlsCfg func() *tls.Config, s *SASLClient) DialFunc {
	return func(ctx context.Context, addr, clientID string, timeout time.Duration) (*Client, error) {
		var cfg *tls.Config
		if tlsCfg != nil {
			cfg = tlsCfg()
		}
		c, err := DialTLS(ctx, addr, clientID, timeout, cfg)
		if err != nil || s == nil {
			return c, err
		}
		if timeout <= 0 {
			timeout = 30 * time.Second
		}
		actx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := c.AuthenticateSASL(actx, s); err != nil {
			return nil, err
		}
		return c, nil
	}
}

// PlainDialer is the dialer of a PLAINTEXT inter-broker listener.
var PlainDialer DialFunc = InterBrokerDialer(nil, nil)
