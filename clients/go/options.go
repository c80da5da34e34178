package taskyard

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout is the deadline of a call whose context has none, unless
// [WithTimeout] says otherwise.
const DefaultTimeout = 30 * time.Second

// An Option configures a Client made by [New].
type Option func(*config)

type config struct {
	token    string
	tenant   string
	tls      *tls.Config
	roots    *x509.CertPool // from WithCA, whatever the order of the options
	insecure bool
	timeout  time.Duration
	dial     []grpc.DialOption
	err      error
}

// WithToken sends token as "authorization: Bearer <token>" on every call.
// A token is sent only over TLS or, with [WithInsecure], to a loopback target.
func WithToken(token string) Option {
	return func(c *config) { c.token = token }
}

// WithTLS sets the TLS configuration (server name, roots, a client certificate
// for mTLS). A nil cfg means the system's roots, which is also the default
// when neither WithTLS, [WithCA] nor [WithInsecure] is given.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) {
		if cfg == nil {
			cfg = &tls.Config{}
		}
		c.tls = cfg.Clone()
		c.insecure = false
	}
}

// WithCA trusts the CA certificates in pem (instead of the system's roots)
// to verify the gateway.
func WithCA(pem []byte) Option {
	return func(c *config) {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			c.err = errors.New("taskyard: WithCA: no certificate found in the PEM data")
			return
		}
		c.roots = pool
		c.insecure = false
	}
}

// WithInsecure connects in plaintext. It is meant for a development gateway
// on loopback, or one behind something that secures the network for it; with
// a token, New refuses any target that is not loopback.
func WithInsecure() Option {
	return func(c *config) {
		c.insecure = true
		c.tls, c.roots = nil, nil
	}
}

// WithTimeout sets the deadline of each call whose context has none
// ([DefaultTimeout] otherwise). Zero or less means no deadline. A Wait gets
// this much on top of its wait timeout.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithDialOptions adds gRPC dial options, after the client's own. Transport
// credentials given here do not change where the token may go: over anything
// but TLS it is refused, unless [WithInsecure] to a loopback target allowed it.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) { c.dial = append(c.dial, opts...) }
}
