// Command worker runs the task "greet" (greet("gopher") returns "hello,
// gopher") for a Taskyard gateway until SIGTERM or Ctrl-C, which drain it: no
// new attempts, the running ones finish.
//
// It reads TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (its
// scopes: work), and speaks plaintext only to a loopback target. Once the
// gateway welcomed it, it prints "ready <worker id>"; once drained, "drained".
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
	err = w.Register("greet", func(_ context.Context, t *worker.Task) (any, error) {
		var name string
		if err := t.DecodeArg(0, &name); err != nil {
			return nil, worker.Fatal(err) // a bad argument fails the same way every time
		}
		t.Log("info", "greeting "+name)
		return "hello, " + name, nil
	}, worker.WithMaxRetries(3))
	if err != nil {
		log.Fatal(err)
	}
	w.OnReady(func(id string) { fmt.Println("ready", id) })
	if err := w.RunUntilSignal(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("drained") // the running attempts finished and reported
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
