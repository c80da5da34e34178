package taskyard

import (
	"context"
	"net"
	"strings"
)

// bearer sends the token on every call. New decides whether the channel may
// carry it, so that a plaintext loopback channel (a development gateway with
// tokens) can, which gRPC's own RequireTransportSecurity would forbid.
type bearer struct{ header string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": b.header}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

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
