package taskyard

import (
	"context"
	"net"
	"strings"
	"testing"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

func TestIsLoopback(t *testing.T) {
	for target, want := range map[string]bool{
		"localhost:50051":         true,
		"LOCALHOST:1":             true,
		"127.0.0.1:50051":         true,
		"127.9.9.9:1":             true,
		"[::1]:50051":             true,
		"dns:///localhost:50051":  true,
		"10.0.0.1:50051":          false,
		"gateway.example.com:443": false,
		"localhost.evil.com:1":    false,
		"[::2]:1":                 false,
	} {
		if got := isLoopback(target); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestNewRefusesTokenInClear(t *testing.T) {
	_, err := New("gateway.example.com:50051", WithInsecure(), WithToken("secret"))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("New = %v, want a refusal", err)
	}
	c, err := New("127.0.0.1:50051", WithInsecure(), WithToken("secret"))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if _, err := New("x:1", WithCA([]byte("not pem"))); err == nil {
		t.Fatal("WithCA of no certificate must fail")
	}
}

func TestTokenNeedsTLSUnlessNewAllowedPlaintext(t *testing.T) {
	if !(bearer{}).RequireTransportSecurity() {
		t.Fatal("a token must require TLS by default")
	}
	f := &fakeTasks{}
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	taskyardv1.RegisterTaskServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	// TLS asked for, then plaintext slipped in through the dial options:
	// either New or the call must refuse.
	c, err := New("gateway.example.com:443", WithToken("secret"), WithDialOptions(
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
	))
	if err == nil {
		defer c.Close()
		_, err = c.Submit(context.Background(), Spec{Name: "add"})
	}
	if err == nil || len(f.md) != 0 {
		t.Fatalf("the token went over plaintext (err %v, %d calls seen)", err, len(f.md))
	}
}
