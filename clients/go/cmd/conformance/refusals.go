package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"google.golang.org/grpc/codes"
)

func errorInvalidArgument(ctx context.Context, e *env) error {
	_, err := e.client.Submit(ctx, taskyard.Spec{Name: ""})
	terr, err := expectError(err, codes.InvalidArgument, "")
	if err != nil {
		return err
	}
	if terr.Domain != taskyard.Domain {
		return fmt.Errorf("domain %q, want %q", terr.Domain, taskyard.Domain)
	}
	if _, ok := terr.Violation("task.name"); !ok {
		return fmt.Errorf("violations %+v, want one on task.name", terr.Violations)
	}
	// An explicit request id shows afterwards whether the valid spec was stored.
	valid := taskyard.Spec{Name: "add", Args: []any{1, 2}, RequestID: newUUID()}
	_, err = e.client.SubmitBatch(ctx, []taskyard.Spec{valid, {Name: ""}})
	if terr, err = expectError(err, codes.InvalidArgument, ""); err != nil {
		return err
	}
	if _, ok := terr.Violation("tasks[1].name"); !ok {
		return fmt.Errorf("violations %+v, want one on tasks[1].name", terr.Violations)
	}
	s, err := e.client.Submit(ctx, valid)
	if err != nil {
		return err
	}
	if !s.Created {
		return fmt.Errorf("the refused batch created task %s", s.ID)
	}
	return nil
}

func errorUnknownTask(ctx context.Context, e *env) error {
	_, err := e.client.Submit(ctx, taskyard.Spec{Name: "no_such_task_conformance"})
	_, err = expectError(err, codes.InvalidArgument, "UNKNOWN_TASK_NAME")
	return err
}

func errorNotFound(ctx context.Context, e *env) error {
	_, err := e.client.Get(ctx, newUUID())
	_, err = expectError(err, codes.NotFound, "TASK_NOT_FOUND")
	return err
}

func errorAlreadyFinal(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 1}})
	if err != nil {
		return err
	}
	if err := expectResult(ctx, e, s.ID, 2); err != nil {
		return err
	}
	_, err = e.client.Cancel(ctx, s.ID, taskyard.CancelOptions{})
	_, err = expectError(err, codes.FailedPrecondition, "TASK_ALREADY_FINAL")
	return err
}

func errorUnauthenticated(ctx context.Context, e *env) error {
	for token, reason := range map[string]string{"": "TOKEN_MISSING", "not-a-valid-token-0000": "TOKEN_INVALID"} {
		c, err := e.dial(e.target, token)
		if err != nil {
			return err
		}
		_, err = c.Get(ctx, newUUID())
		c.Close()
		if _, err := expectError(err, codes.Unauthenticated, reason); err != nil {
			return fmt.Errorf("token %q: %w", token, err)
		}
	}
	return nil
}

func errorPermissionDenied(ctx context.Context, e *env) error {
	reader, err := e.dial(e.target, e.readToken)
	if err != nil {
		return err
	}
	defer reader.Close()
	_, err = reader.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 1}})
	if _, err := expectError(err, codes.PermissionDenied, "SCOPE_MISSING"); err != nil {
		return err
	}
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 1}})
	if err != nil {
		return err
	}
	if _, err := reader.Get(ctx, s.ID); err != nil {
		return fmt.Errorf("the read-only client cannot get: %w", err)
	}
	return nil
}

func errorResourceExhausted(ctx context.Context, e *env) error {
	huge := strings.Repeat("x", 5<<20)
	_, err := e.client.Submit(ctx, taskyard.Spec{Name: "echo", Args: []any{huge}})
	_, err = expectError(err, codes.ResourceExhausted, "")
	return err
}

func errorDeadline(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "sleep", Args: []any{30}})
	if err != nil {
		return err
	}
	defer e.cleanup(s.ID)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, _, err = e.client.Wait(short, s.ID, 10*time.Second)
	_, err = expectError(err, codes.DeadlineExceeded, "")
	return err
}

func errorUnavailable(ctx context.Context, e *env) error {
	c, err := e.dial(e.closedTarget, e.token)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Get(ctx, newUUID())
	if _, err := expectError(err, codes.Unavailable, ""); err != nil {
		return err
	}
	if took := time.Since(start); took > 10*time.Second {
		return fmt.Errorf("UNAVAILABLE after %v, want within 10 s", took)
	}
	return nil
}

// newUUID is a random version 4 UUID. It repeats the client's unexported
// newRequestID rather than make a UUID helper part of the package's API.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
