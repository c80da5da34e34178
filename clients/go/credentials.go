package taskyard

import (
	"context"
	"net"
	"strings"
)

// bearer sends the token on every call, and only over TLS unless New let
// plaintext through (WithInsecure to a loopback target: a development gateway
// with tokens). gRPC checks the connection actually made, so credentials
// swapped in by WithDialOptions cannot carry the token in clear.
type bearer struct {
	header      string
	plaintextOK bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": b.header}, nil
}

func (b bearer) RequireTransportSecurity() bool { return !b.plaintextOK }

// isLoopback reports whether target (host:port, [v6]:port or dns:///host:port)
// names this machine; host names other than localhost are not resolved, since
// what they resolve to may change.
func isLoopback(target string) bool {
	for _, scheme := range []string{"dns:///", "passthrough:///", "ipv4:", "ipv6:"} {
		target = strings.TrimPrefix(target, scheme)
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = strings.Trim(target, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
