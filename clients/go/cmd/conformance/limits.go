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
