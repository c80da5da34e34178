// Command bench-worker is the Go side of bench/workers: a worker (package
// worker) that registers one function which does nothing and returns null,
// so what a run measures is the protocol's path through the suite, not a
// body.
//
//	bench-worker -target 127.0.0.1:50051 -name bench_noop_go -slots 128
//
// Each flag has an environment variable as its default: TASKYARD_TARGET
// (host:port, plaintext), TASKYARD_TOKEN, TASKYARD_BENCH_TASK (default
// bench_noop_go) and TASKYARD_WORKER_SLOTS (default 64). Once welcomed it
// prints "ready <worker_id>" on stdout; SIGTERM drains it. The worker logs
// only warnings and errors (on stderr): a line per attempt would be measured
// too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"github.com/taskyard/taskyard/clients/go/worker"
)

const (
	defaultName  = "bench_noop_go"
	defaultSlots = 64
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-worker:", err)
		os.Exit(1)
	}
}

func run(argv []string) error {
	slots, err := envInt("TASKYARD_WORKER_SLOTS", defaultSlots)
	if err != nil {
		return err
	}
	flags := flag.NewFlagSet("bench-worker", flag.ContinueOnError)
	target := flags.String("target", os.Getenv("TASKYARD_TARGET"), "the gateway, host:port (plaintext)")
	name := flags.String("name", envOr("TASKYARD_BENCH_TASK", defaultName), "the task name the no-op runs as")
	flags.IntVar(&slots, "slots", slots, fmt.Sprintf("attempts run at once, 1..%d", worker.MaxSlots))
	if err := flags.Parse(argv); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if slots < 1 || slots > worker.MaxSlots {
		// worker.Config reads 0 as its default: a bench must run the slots it says.
		return fmt.Errorf("%d slots, want 1..%d", slots, worker.MaxSlots)
	}
	if *target == "" {
		return errors.New("no gateway: pass -target or set TASKYARD_TARGET")
	}
	opts := []taskyard.Option{taskyard.WithInsecure()}
	if token := os.Getenv("TASKYARD_TOKEN"); token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	client, err := taskyard.New(*target, opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	w, err := worker.New(client, worker.Config{
		Slots:  slots,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	noop := func(context.Context, *worker.Task) (any, error) { return nil, nil }
	if err := w.Register(*name, noop); err != nil {
		return err
	}
	w.OnReady(func(id string) {
		// os.Stdout is not buffered: the line is out once Println returns.
		fmt.Println("ready", id)
	})
	return w.RunUntilSignal(context.Background())
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

func envInt(key string, fallback int) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", key, v, err)
	}
	return n, nil
}
