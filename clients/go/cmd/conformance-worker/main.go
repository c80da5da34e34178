// Command conformance-worker is the Go worker of the worker conformance suite
// (clients/conformance/workers.md): it registers the suite's task set with
// package worker and runs until SIGTERM, which drains it.
//
// It reads TASKYARD_TARGET (host:port, plaintext), TASKYARD_TOKEN,
// TASKYARD_TASK_PREFIX and TASKYARD_WORKER_SLOTS (default 4). Once welcomed it
// prints "ready <worker_id>" on stdout. A worker the gateway refuses prints
// the error, with its gRPC status name, on stderr and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"github.com/taskyard/taskyard/clients/go/worker"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-worker:", err)
		os.Exit(1)
	}
}

func run() error {
	target := os.Getenv("TASKYARD_TARGET")
	if target == "" {
		return errors.New("TASKYARD_TARGET is not set")
	}
	slots := 4
	if s := os.Getenv("TASKYARD_WORKER_SLOTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("TASKYARD_WORKER_SLOTS=%q: %w", s, err)
		}
		slots = n
	}
	opts := []taskyard.Option{taskyard.WithInsecure()}
	if token := os.Getenv("TASKYARD_TOKEN"); token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	client, err := taskyard.New(target, opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	w, err := worker.New(client, worker.Config{
		Slots:  slots,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		return err
	}
	prefix := os.Getenv("TASKYARD_TASK_PREFIX")
	for name, fn := range functions(prefix) {
		if err := w.Register(prefix+name, fn); err != nil {
			return err
		}
	}
	w.OnReady(func(id string) {
		// os.Stdout is not buffered: the line is out once Println returns.
		fmt.Println("ready", id)
	})
	return w.RunUntilSignal(context.Background())
}

// functions is the suite's task set, by name without the prefix.
func functions(prefix string) map[string]worker.Func {
	return map[string]worker.Func{
		"echo": func(_ context.Context, t *worker.Task) (any, error) {
			if len(t.Args) != 1 {
				return nil, worker.Fatal(fmt.Errorf("echo takes 1 argument, got %d", len(t.Args)))
			}
			return t.Args[0], nil
		},
		"flaky": func(_ context.Context, t *worker.Task) (any, error) {
			var succeedOn int
			if err := t.DecodeArg(0, &succeedOn); err != nil {
				return nil, worker.Fatal(err)
			}
			if t.Attempt < succeedOn {
				return nil, worker.Errorf("Flaky", "attempt %d", t.Attempt)
			}
			return t.Attempt, nil
		},
		"fatal": func(_ context.Context, t *worker.Task) (any, error) {
			var message string
			if err := t.DecodeArg(0, &message); err != nil {
				return nil, worker.Fatal(err)
			}
			return nil, worker.Fatal(worker.Errorf("Fatal", "%s", message))
		},
		"sleep": func(ctx context.Context, t *worker.Task) (any, error) {
			d, err := seconds(t)
			if err != nil {
				return nil, err
			}
			timer := time.NewTimer(d)
			defer timer.Stop()
			select {
			case <-timer.C:
				return t.Args[0], nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		},
		"stubborn": func(_ context.Context, t *worker.Task) (any, error) {
			d, err := seconds(t)
			if err != nil {
				return nil, err
			}
			time.Sleep(d) // ignores its cancel, on purpose
			return "done", nil
		},
		"chatty": func(_ context.Context, t *worker.Task) (any, error) {
			for _, line := range []string{"one", "two", "three"} {
				t.Log("info", line)
			}
			t.Progress(0.5, "half")
			return "ok", nil
		},
		"parent": func(ctx context.Context, t *worker.Task) (any, error) {
			if len(t.Args) != 1 {
				return nil, worker.Fatal(fmt.Errorf("parent takes 1 argument, got %d", len(t.Args)))
			}
			return t.SubmitChild(ctx, prefix+"echo", t.Args[0])
		},
	}
}

// seconds is the task's first argument, a number of seconds.
func seconds(t *worker.Task) (time.Duration, error) {
	var s float64
	if err := t.DecodeArg(0, &s); err != nil {
		return 0, worker.Fatal(err)
	}
	if s < 0 {
		return 0, worker.Fatal(fmt.Errorf("%v seconds", s))
	}
	return time.Duration(s * float64(time.Second)), nil
}
