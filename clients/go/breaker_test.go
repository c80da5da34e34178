package taskyard

import (
	"context"
	"errors"
	"testing"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestLimitsCreateGetListUpdateABreaker(t *testing.T) {
	c, f := startLimits(t)
	ctx := context.Background()
	breaker := Limit{
		Name:    "payments",
		PerKey:  true,
		Breaker: &CircuitBreaker{FailureThreshold: 5, Window: 30 * time.Second, MinAttempts: 8, CoolDown: 10 * time.Second, HalfOpenProbes: 2},
	}
	if _, err := c.Limits().Create(ctx, breaker); err != nil {
		t.Fatal(err)
	}
	want := &taskyardv1.CircuitBreaker{
		FailureThreshold: 5, Window: durationpb.New(30 * time.Second), MinAttempts: 8,
		CoolDown: durationpb.New(10 * time.Second), HalfOpenProbes: 2,
	}
	if stored := f.limits["payments"]; !proto.Equal(stored.GetBreaker(), want) || !stored.GetPerKey() {
		t.Fatalf("stored %v, want breaker %v per key", stored, want)
	}
	got, err := c.Limits().Get(ctx, "payments")
	if err != nil {
		t.Fatal(err)
	}
	if got.Breaker == nil || *got.Breaker != *breaker.Breaker || got.Rate != nil || got.Concurrency != nil || !got.PerKey {
		t.Errorf("Get = %+v, breaker %+v", got, got.Breaker)
	}
	page, err := c.Limits().List(ctx, LimitListOptions{})
	if err != nil || len(page.Limits) != 1 || page.Limits[0].Breaker == nil || page.Limits[0].Breaker.FailureThreshold != 5 {
		t.Fatalf("List = %+v, %v", page, err)
	}
	breaker.Breaker = &CircuitBreaker{FailureThreshold: 3}
	updated, err := c.Limits().Update(ctx, breaker)
	if err != nil {
		t.Fatal(err)
	}
	// Zero durations go unset, so the gateway's defaults (60 s, 30 s) apply.
	sent := f.limits["payments"].GetBreaker()
	if sent.GetWindow() != nil || sent.GetCoolDown() != nil || sent.GetFailureThreshold() != 3 {
		t.Errorf("update sent %v, want no window nor cool-down", sent)
	}
	if *updated.Breaker != (CircuitBreaker{FailureThreshold: 3}) {
		t.Errorf("Update = %+v", updated.Breaker)
	}
}

func TestLimitsRefusesABreakerWithAnotherKind(t *testing.T) {
	c, f := startLimits(t)
	both := Limit{Name: "x", Concurrency: &ConcurrencyLimit{MaxUnits: 1}, Breaker: &CircuitBreaker{FailureThreshold: 1}}
	_, err := c.Limits().Create(context.Background(), both)
	var terr *Error
	if !errors.As(err, &terr) || terr.Code != codes.InvalidArgument {
		t.Fatalf("Create = %v, want INVALID_ARGUMENT", err)
	}
	if _, ok := terr.Violation("limit"); !ok || len(f.limits) != 0 {
		t.Errorf("violations %v, stored %v", terr.Violations, f.limits)
	}
}

func TestSubmitSendsABreakerKey(t *testing.T) {
	e := &echoTasks{}
	c := startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterTaskServiceServer(srv, e) })
	use := LimitUse{Limit: "payments", Key: "payments-api"}
	s, err := c.Submit(context.Background(), Spec{Name: "charge", Limits: []LimitUse{use}})
	if err != nil {
		t.Fatal(err)
	}
	sent := e.spec.GetLimits()
	if len(sent) != 1 || sent[0].GetLimit() != "payments" || sent[0].GetKey() != "payments-api" {
		t.Errorf("limits sent %v", sent)
	}
	if len(s.Limits) != 1 || s.Limits[0] != use {
		t.Errorf("task limits %v", s.Limits)
	}
}

func TestFailureSaysThrottledRetryAfterAndRefunded(t *testing.T) {
	p := &taskyardv1.Task{
		Id: "t1", State: taskyardv1.TaskState_TASK_STATE_RETRYING, Attempt: 2,
		Failure: &taskyardv1.TaskFailure{Attempt: 2, Type: "RetryAfter", Throttled: true, RetryAfter: durationpb.New(2500 * time.Millisecond)},
		Failures: []*taskyardv1.TaskFailure{
			{Attempt: 1, Type: "ConnectionError", Refunded: true},
			{Attempt: 2, Type: "RetryAfter", Throttled: true, RetryAfter: durationpb.New(2500 * time.Millisecond)},
		},
	}
	task := taskFromProto(p)
	if f := task.Failure; !f.Throttled || f.RetryAfter != 2500*time.Millisecond || f.Refunded {
		t.Errorf("failure %+v", f)
	}
	first := task.Failures[0]
	if first.Throttled || first.RetryAfter != 0 || !first.Refunded {
		t.Errorf("first failure %+v", first)
	}
}
