package taskyard

import (
	"strings"
	"testing"
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
