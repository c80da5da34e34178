package taskyard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// A Client calls one Taskyard gateway. It is safe for concurrent use; make
// one per gateway and Close it when done.
type Client struct {
	conn     *grpc.ClientConn
	tasks    taskyardv1.TaskServiceClient
	limits   taskyardv1.LimitServiceClient
	failures taskyardv1.FailureServiceClient
	tenants  taskyardv1.TenantServiceClient
	timeout  time.Duration
	// The tenant an operator token acts as ([WithTenant]); empty: none.
	tenant string
}

// New makes a client of the gateway at target ("host:port"). It does not
// connect yet: the first call does, and reconnects as needed.
//
// The channel uses TLS with the system's roots unless options say otherwise.
// New fails for options that do not go together, such as a token over
// plaintext to a target that is not loopback.
func New(target string, opts ...Option) (*Client, error) {
	cfg := config{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.err != nil {
		return nil, cfg.err
	}
	if target == "" {
		return nil, errors.New("taskyard: empty target")
	}
	dial := []grpc.DialOption{
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithChainUnaryInterceptor(traceUnary),
		grpc.WithChainStreamInterceptor(traceStream),
	}
	if cfg.insecure {
		if cfg.token != "" && !isLoopback(target) {
			return nil, fmt.Errorf("taskyard: a token is sent only over TLS or to a loopback target, and %q is neither", target)
		}
		dial = append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		tlsCfg := cfg.tls
		if tlsCfg == nil {
			tlsCfg = &tls.Config{}
		}
		if cfg.roots != nil {
			tlsCfg.RootCAs = cfg.roots
		}
		dial = append(dial, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	}
	dial = append(dial, tenantInterceptors(cfg.tenant)...)
	if cfg.token != "" {
		tok := bearer{header: "Bearer " + cfg.token, plaintextOK: cfg.insecure}
		dial = append(dial, grpc.WithPerRPCCredentials(tok))
	}
	conn, err := grpc.NewClient(target, append(dial, cfg.dial...)...)
	if err != nil {
		return nil, fmt.Errorf("taskyard: %w", err)
	}
	return &Client{
		conn:     conn,
		tasks:    taskyardv1.NewTaskServiceClient(conn),
		limits:   taskyardv1.NewLimitServiceClient(conn),
		failures: taskyardv1.NewFailureServiceClient(conn),
		tenants:  taskyardv1.NewTenantServiceClient(conn),
		timeout:  cfg.timeout,
		tenant:   cfg.tenant,
	}, nil
}

// Tenant is the tenant the client acts as ([WithTenant]); empty: none.
func (c *Client) Tenant() string { return c.tenant }

// Close closes the connection; calls in flight fail with Canceled.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the client's connection, with its token, TLS and trace
// propagation, for the services this package does not wrap. UNAVAILABLE is
// retried on it for reads and submits only (see serviceConfig):
//
//	queues := taskyardv1.NewQueueServiceClient(c.Conn())
func (c *Client) Conn() grpc.ClientConnInterface { return c.conn }

// callContext gives a call the client's default deadline (plus extra, the
// time the server may legitimately hold it) when ctx has no deadline.
func (c *Client) callContext(ctx context.Context, extra time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout+extra)
}
