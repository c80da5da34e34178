// Command conformance runs the client conformance scenarios
// (clients/conformance/README.md) against a live Taskyard suite, with the
// public API of package taskyard only.
//
// It reads TASKYARD_TARGET, TASKYARD_TOKEN, TASKYARD_READ_TOKEN,
// TASKYARD_CLOSED_TARGET, TASKYARD_LIMIT, TASKYARD_ADMIN_TOKEN, TASKYARD_TENANT_A,
// TASKYARD_TENANT_B and their _TOKEN, prints PASS or FAIL per scenario and
// exits 0 only when all passed.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"google.golang.org/grpc/codes"
)

type env struct {
	target, token, readToken, closedTarget string
	// A per-key concurrency limit of 2 the harness created.
	limit  string
	client *taskyard.Client
	// A client with the admin scope (redrives, breakers); nil without TASKYARD_ADMIN_TOKEN.
	admin *taskyard.Client
}

type scenario struct {
	id  string
	run func(context.Context, *env) error
}

// The order of clients/conformance/scenarios.txt.
var scenarios = []scenario{
	{"submit_and_wait", submitAndWait},
	{"submit_options", submitOptions},
	{"batch", batch},
	{"get", get},
	{"wait_timeout", waitTimeout},
	{"list_pages", listPages},
	{"cancel_queued", cancelQueued},
	{"cancel_running", cancelRunning},
	{"idempotent_resubmit", idempotentResubmit},
	{"error_invalid_argument", errorInvalidArgument},
	{"error_unknown_task", errorUnknownTask},
	{"error_not_found", errorNotFound},
	{"error_already_final", errorAlreadyFinal},
	{"error_unauthenticated", errorUnauthenticated},
	{"error_permission_denied", errorPermissionDenied},
	{"error_resource_exhausted", errorResourceExhausted},
	{"error_deadline", errorDeadline},
	{"error_unavailable", errorUnavailable},
	{"task_failure", taskFailure},
	{"submit_with_limit_key", submitWithLimitKey},
	{"unknown_limit_refused", unknownLimitRefused},
	{"run_task", runTask},
	{"redrive_dead_letters", redriveDeadLetters},
	{"breaker_limit", breakerLimit},
	{"tenant_isolation", tenantIsolation},
}

func main() {
	e := &env{
		target:       getenv("TASKYARD_TARGET", "localhost:50051"),
		token:        os.Getenv("TASKYARD_TOKEN"),
		readToken:    os.Getenv("TASKYARD_READ_TOKEN"),
		closedTarget: getenv("TASKYARD_CLOSED_TARGET", "127.0.0.1:1"),
		limit:        os.Getenv("TASKYARD_LIMIT"),
	}
	client, err := e.dial(e.target, e.token)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	defer client.Close()
	e.client = client
	if token := os.Getenv("TASKYARD_ADMIN_TOKEN"); token != "" {
		admin, err := e.dial(e.target, token)
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			os.Exit(2)
		}
		defer admin.Close()
		e.admin = admin
	}

	passed := 0
	for _, s := range scenarios {
		if err := runOne(s, e); err != nil {
			fmt.Printf("FAIL %s: %v\n", s.id, err)
			continue
		}
		passed++
		fmt.Printf("PASS %s\n", s.id)
	}
	fmt.Printf("go conformance: %d/%d passed\n", passed, len(scenarios))
	if passed != len(scenarios) {
		os.Exit(1)
	}
}

// runOne turns a panic into a failure, so the next scenario still runs.
func runOne(s scenario, e *env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return s.run(ctx, e)
}

// dial makes a plaintext client, as the suite is a loopback dev gateway.
func (e *env) dial(target, token string) (*taskyard.Client, error) {
	opts := []taskyard.Option{taskyard.WithInsecure()}
	if token != "" {
		opts = append(opts, taskyard.WithToken(token))
	}
	return taskyard.New(target, opts...)
}

func getenv(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// expectError checks that err is an *taskyard.Error with code and, unless
// empty, reason.
func expectError(err error, code codes.Code, reason string) (*taskyard.Error, error) {
	if err == nil {
		return nil, fmt.Errorf("no error, want %s", code)
	}
	var terr *taskyard.Error
	if !errors.As(err, &terr) {
		return nil, fmt.Errorf("error %T (%v), want *taskyard.Error", err, err)
	}
	if terr.Code != code {
		return terr, fmt.Errorf("code %s, want %s (%v)", terr.Code, code, terr)
	}
	if reason != "" && terr.Reason != reason {
		return terr, fmt.Errorf("reason %q, want %q (%v)", terr.Reason, reason, terr)
	}
	return terr, nil
}

// cleanup cancels a task a scenario left running; a failure to do so does
// not change the scenario's outcome.
func (e *env) cleanup(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = e.client.Cancel(ctx, id, taskyard.CancelOptions{Reason: "conformance cleanup"})
}
