// Command chaos-worker is a Go worker for the fault schedule (bench/chaos
// --go-worker). It runs beside the Python pools, registers the same task
// names and runs them the same way as bench/chaos_tasks.py. Each body run
// appends "start", then "ok" or "raise" lines to the journal named by
// TASKYARD_CHAOS_JOURNAL, so the runner checks the Go worker's runs as it
// checks the pools' runs.
//
// It reads TASKYARD_TARGET (host:port, plaintext; several gateways separated
// by commas are tried in turn, the next one when the one it uses goes away),
// TASKYARD_TOKEN and TASKYARD_WORKER_SLOTS (default 8). Once welcomed it
// prints "ready <worker_id>" on stdout, again after each reconnection.
// SIGTERM drains it; on Linux it is sent one when the process named by
// TASKYARD_LAUNCHER_PID dies.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"github.com/taskyard/taskyard/clients/go/worker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// journalEnv names the journal file, as in bench/chaos_tasks.py.
const journalEnv = "TASKYARD_CHAOS_JOURNAL"

// Retries of the tasks that fail on purpose, as their @task declarations in
// bench/chaos_tasks.py: retry_backoff=0.2, retry_backoff_max=1.0, retry_jitter=0.
const (
	retryBackoff    = 200 * time.Millisecond
	retryBackoffMax = time.Second
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos-worker:", err)
		os.Exit(1)
	}
}

func run() error {
	if err := endWithLauncher(); err != nil {
		return err
	}
	journal := os.Getenv(journalEnv)
	if journal == "" {
		return fmt.Errorf("%s is not set", journalEnv)
	}
	slots := 8
	if s := os.Getenv("TASKYARD_WORKER_SLOTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("TASKYARD_WORKER_SLOTS=%q: %w", s, err)
		}
		slots = n
	}
	client, err := connect(os.Getenv("TASKYARD_TARGET"), os.Getenv("TASKYARD_TOKEN"))
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
	j := journalFile(journal)
	retried := []worker.TaskOption{worker.WithMaxRetries(3)}
	for _, f := range []struct {
		name string
		fn   worker.Func
		opts []worker.TaskOption
	}{
		{"chaos_noop", j.noop, nil},
		{"chaos_sleep", j.sleep, nil},
		{"chaos_flaky", j.flaky, retried},
		{"chaos_failing", j.failing, []worker.TaskOption{worker.WithMaxRetries(2)}},
		{"chaos_flow", j.flow, retried},
	} {
		if err := w.Register(f.name, f.fn, f.opts...); err != nil {
			return err
		}
	}
	w.OnReady(func(id string) {
		// os.Stdout is not buffered: the line is out once Println returns.
		fmt.Println("ready", id)
	})
	return w.RunUntilSignal(context.Background())
}

// connect makes the client of one gateway, or of several tried in turn: with
// pick_first over their addresses, a stream that broke because its gateway
// died opens again on the first one that answers.
func connect(target, token string) (*taskyard.Client, error) {
	var addrs []resolver.Address
	for _, t := range strings.Split(target, ",") {
		if t = strings.TrimSpace(t); t != "" {
			addrs = append(addrs, resolver.Address{Addr: t})
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("TASKYARD_TARGET is not set")
	}
	// The gateway comes back within seconds of a kill: try again within a
	// second, not after gRPC's default backoff, which grows to two minutes.
	opts := []taskyard.Option{
		taskyard.WithInsecure(),
		taskyard.WithDialOptions(grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		})),
	}
	if token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	if len(addrs) == 1 {
		return taskyard.New(addrs[0].Addr, opts...)
	}
	if token != "" {
		// The client sends a token in plaintext to a loopback target only, and
		// cannot tell that the resolver's addresses are all loopback.
		return nil, errors.New("a token goes with one gateway target over plaintext, not with several")
	}
	r := manual.NewBuilderWithScheme("chaos")
	r.InitialState(resolver.State{Addresses: addrs})
	opts = append(opts, taskyard.WithDialOptions(grpc.WithResolvers(r)))
	return taskyard.New(r.Scheme()+":///gateways", opts...)
}

// journalFile appends the lines of bench/chaos_tasks.py's journal.
type journalFile string

// write appends "<event> <task id> <attempt> <pid> <unix time>[ <key>]" with
// one O_APPEND write, so that lines of concurrent runs never interleave.
func (j journalFile) write(t *worker.Task, event, key string) {
	tail := ""
	if key != "" {
		tail = " " + key
	}
	now := float64(time.Now().UnixNano()) / 1e9
	line := fmt.Sprintf("%s %s %d %d %.3f%s\n", event, t.ID, t.Attempt, os.Getpid(), now, tail)
	f, err := os.OpenFile(string(j), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		// A run the journal misses would pass for a lost one: stop loudly.
		fmt.Fprintln(os.Stderr, "chaos-worker: journal:", err)
		os.Exit(1)
	}
	defer f.Close()
	if _, err := f.Write([]byte(line)); err != nil {
		fmt.Fprintln(os.Stderr, "chaos-worker: journal:", err)
		os.Exit(1)
	}
}

func (j journalFile) noop(_ context.Context, t *worker.Task) (any, error) {
	j.write(t, "start", "")
	j.write(t, "ok", "")
	return "ok", nil
}

func (j journalFile) sleep(ctx context.Context, t *worker.Task) (any, error) {
	var seconds float64
	if err := t.DecodeArg(0, &seconds); err != nil {
		return nil, worker.Fatal(err)
	}
	j.write(t, "start", "")
	if err := pause(ctx, seconds); err != nil {
		return nil, err
	}
	j.write(t, "ok", "")
	return seconds, nil
}

// flaky fails its first attempt and succeeds on a retry.
func (j journalFile) flaky(ctx context.Context, t *worker.Task) (any, error) {
	var seconds float64
	if err := t.DecodeArg(0, &seconds); err != nil {
		return nil, worker.Fatal(err)
	}
	j.write(t, "start", "")
	if err := pause(ctx, seconds); err != nil {
		return nil, err
	}
	if t.Attempt <= 1 {
		j.write(t, "raise", "")
		return nil, planned(t, "first attempt fails on purpose")
	}
	j.write(t, "ok", "")
	return "recovered", nil
}

// failing fails every attempt: it ends FAILURE once its retries are spent.
func (j journalFile) failing(_ context.Context, t *worker.Task) (any, error) {
	j.write(t, "start", "")
	j.write(t, "raise", "")
	return nil, planned(t, "always fails")
}

// flow is the flow-control schedule's task (bench/chaos --flow): its customer,
// the limit key, ends each journal line.
func (j journalFile) flow(ctx context.Context, t *worker.Task) (any, error) {
	var customer string
	var seconds float64
	var failFirst bool
	for i, v := range []any{&customer, &seconds, &failFirst} {
		if err := t.DecodeArg(i, v); err != nil {
			return nil, worker.Fatal(err)
		}
	}
	j.write(t, "start", customer)
	if err := pause(ctx, seconds); err != nil {
		return nil, err
	}
	if failFirst && t.Attempt <= 1 {
		j.write(t, "raise", customer)
		return nil, planned(t, "first attempt fails on purpose")
	}
	j.write(t, "ok", customer)
	return customer, nil
}

// pause sleeps, or returns the cause of ctx's end: then the run ends with no
// journal line, as a Python body cancelled mid-sleep does (a run cut short).
func pause(ctx context.Context, seconds float64) error {
	if seconds < 0 {
		return worker.Fatal(fmt.Errorf("%v seconds", seconds))
	}
	timer := time.NewTimer(time.Duration(seconds * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// planned is a PlannedFailure, retried after the Python declaration's backoff
// (the gateway's own is the suite's, which differs).
func planned(t *worker.Task, message string) error {
	// The shift stops at 10: past the cap long before, and no overflow.
	delay := min(retryBackoffMax, retryBackoff<<min(max(0, t.Attempt-1), 10))
	return worker.RetryAfter(delay, worker.Errorf("PlannedFailure", "%s", message))
}
