package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"google.golang.org/grpc/codes"
)

func submitWithLimitKey(ctx context.Context, e *env) error {
	if e.limit == "" {
		return errors.New("TASKYARD_LIMIT is not set (see clients/conformance/README.md)")
	}
	use := taskyard.LimitUse{Limit: e.limit, Key: "customer:42", Units: 1}
	s, err := e.client.Submit(ctx, taskyard.Spec{
		Name:        "echo",
		Args:        []any{"x"},
		Limits:      []taskyard.LimitUse{use},
		FairnessKey: "customer:42",
	})
	if err != nil {
		return err
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	if !slices.Contains(t.Limits, use) {
		return fmt.Errorf("limits %+v, want them to hold %+v", t.Limits, use)
	}
	if t.FairnessKey != "customer:42" {
		return fmt.Errorf("fairness key %q, want customer:42", t.FairnessKey)
	}
	done, _, err := e.client.Wait(ctx, s.ID, 30*time.Second)
	if err != nil {
		return err
	}
	if done.State != taskyard.StateSuccess {
		return fmt.Errorf("state %s, want SUCCESS", done.State)
	}
	return nil
}

func unknownLimitRefused(ctx context.Context, e *env) error {
	// An explicit request id shows afterwards whether the refused spec was stored.
	spec := taskyard.Spec{
		Name:      "echo",
		Args:      []any{"x"},
		Limits:    []taskyard.LimitUse{{Limit: "no-such-limit", Key: "customer:42"}},
		RequestID: newUUID(),
	}
	_, err := e.client.Submit(ctx, spec)
	terr, err := expectError(err, codes.InvalidArgument, "")
	if err != nil {
		return err
	}
	if !errors.Is(terr, taskyard.ErrUnknownLimit) {
		return fmt.Errorf("reason %q, want UNKNOWN_LIMIT (%v)", terr.Reason, terr)
	}
	v, ok := terr.Violation("task.limits[0].limit")
	if !ok || v.Reason != "UNKNOWN_LIMIT" {
		return fmt.Errorf("violations %+v, want one on task.limits[0].limit with reason UNKNOWN_LIMIT", terr.Violations)
	}
	spec.Limits = nil
	s, err := e.client.Submit(ctx, spec)
	if err != nil {
		return err
	}
	if !s.Created {
		return fmt.Errorf("the refused submit created task %s", s.ID)
	}
	return nil
}

// breakerLimit makes a per-key circuit breaker, reads it back, submits a
// task through one of its keys, and has bad breaker numbers refused.
func breakerLimit(ctx context.Context, e *env) error {
	if e.admin == nil {
		return errors.New("TASKYARD_ADMIN_TOKEN is not set (see clients/conformance/README.md)")
	}
	limits := e.admin.Limits()
	// The four runners share one suite: each makes a breaker of its own.
	name := "conformance-breaker-" + newUUID()[:8]
	want := taskyard.CircuitBreaker{FailureThreshold: 5, Window: 30 * time.Second, MinAttempts: 8, CoolDown: 10 * time.Second, HalfOpenProbes: 2}
	if _, err := limits.Create(ctx, taskyard.Limit{Name: name, PerKey: true, Breaker: &want}); err != nil {
		return err
	}
	got, err := limits.Get(ctx, name)
	if err != nil {
		return err
	}
	if got.Breaker == nil || *got.Breaker != want || !got.PerKey || got.Rate != nil || got.Concurrency != nil {
		return fmt.Errorf("read back %+v with breaker %+v, want a per-key breaker %+v", got, got.Breaker, want)
	}
	s, err := e.client.Submit(ctx, taskyard.Spec{
		Name:   "echo",
		Args:   []any{"x"},
		Limits: []taskyard.LimitUse{{Limit: name, Key: "payments-api"}},
	})
	if err != nil {
		return err
	}
	if !s.Created {
		return fmt.Errorf("task %s not created", s.ID)
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(t.Limits, func(u taskyard.LimitUse) bool { return u.Limit == name && u.Key == "payments-api" }) {
		return fmt.Errorf("limits %+v, want them to hold %s with key payments-api", t.Limits, name)
	}
	done, _, err := e.client.Wait(ctx, s.ID, 30*time.Second)
	if err != nil {
		return err
	}
	if done.State != taskyard.StateSuccess {
		return fmt.Errorf("state %s, want SUCCESS", done.State)
	}
	bad := []struct {
		field   string
		breaker taskyard.CircuitBreaker
	}{
		{"limit.breaker.failure_threshold", taskyard.CircuitBreaker{FailureThreshold: 0}},
		{"limit.breaker.half_open_probes", taskyard.CircuitBreaker{FailureThreshold: 5, HalfOpenProbes: 1001}},
	}
	for _, b := range bad {
		refused := name + "-refused"
		_, err := limits.Create(ctx, taskyard.Limit{Name: refused, Breaker: &b.breaker})
		terr, err := expectError(err, codes.InvalidArgument, "")
		if err != nil {
			return fmt.Errorf("%s: %w", b.field, err)
		}
		if _, ok := terr.Violation(b.field); !ok {
			return fmt.Errorf("violations %+v, want one on %s", terr.Violations, b.field)
		}
		if _, err := limits.Get(ctx, refused); err == nil {
			return fmt.Errorf("the refused breaker %s was stored", refused)
		} else if _, err := expectError(err, codes.NotFound, "LIMIT_NOT_FOUND"); err != nil {
			return err
		}
	}
	return nil
}
