// Command worker runs the task "add" for a Taskyard gateway until SIGTERM or
// Ctrl-C, which drain it: no new attempts, the running ones finish.
//
// It reads TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (its
// scopes: work), and speaks plaintext only to a loopback target. Submit to it
// with the add example: `go run ./add`.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"strings"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"github.com/taskyard/taskyard/clients/go/worker"
)

func main() {
	target := os.Getenv("TASKYARD_TARGET")
	if target == "" {
		target = "localhost:50051"
	}
	var opts []taskyard.Option
	if isLoopback(target) {
		opts = append(opts, taskyard.WithInsecure())
	}
	if token := os.Getenv("TASKYARD_TOKEN"); token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	client, err := taskyard.New(target, opts...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	w, err := worker.New(client, worker.Config{Slots: 4})
	if err != nil {
		log.Fatal(err)
	}
	err = w.Register("add", func(_ context.Context, t *worker.Task) (any, error) {
		var a, b int
		if err := t.DecodeArg(0, &a); err != nil {
			return nil, worker.Fatal(err) // a bad argument fails the same way every time
		}
		if err := t.DecodeArg(1, &b); err != nil {
			return nil, worker.Fatal(err)
		}
		t.Logf("info", "adding %d and %d", a, b)
		return a + b, nil
	}, worker.WithMaxRetries(3))
	if err != nil {
		log.Fatal(err)
	}
	w.OnReady(func(id string) { fmt.Println("ready", id) })
	if err := w.RunUntilSignal(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func isLoopback(target string) bool {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
