package taskyard

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func withDetails(t *testing.T, st *status.Status, details ...*errdetails.ErrorInfo) *status.Status {
	t.Helper()
	for _, d := range details {
		var err error
		if st, err = st.WithDetails(d); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestCallErrorDecodesDetails(t *testing.T) {
	st := status.New(codes.InvalidArgument, "tasks[1].name: must not be empty")
	st, err := st.WithDetails(
		&errdetails.ErrorInfo{Reason: "INVALID_ARGUMENT", Domain: Domain, Metadata: map[string]string{"field": "tasks[1].name"}},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: "tasks[1].name", Description: "must not be empty", Reason: "INVALID_ARGUMENT"},
			{Field: "tasks[2].args[0]", Description: "string must not contain NUL", Reason: "NUL_CHARACTER"},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	got := callError(fmt.Errorf("wrapped: %w", st.Err()))
	var terr *Error
	if !errors.As(got, &terr) {
		t.Fatalf("callError = %T, want *Error", got)
	}
	if terr.Code != codes.InvalidArgument || terr.Reason != "INVALID_ARGUMENT" || terr.Domain != Domain {
		t.Errorf("got %+v", terr)
	}
	if terr.Metadata["field"] != "tasks[1].name" {
		t.Errorf("metadata %v", terr.Metadata)
	}
	if len(terr.Violations) != 2 {
		t.Fatalf("violations %+v", terr.Violations)
	}
	if v, ok := terr.Violation("tasks[2].args[0]"); !ok || v.Reason != "NUL_CHARACTER" || v.Description == "" {
		t.Errorf("violation %+v, %v", v, ok)
	}
	if status.Code(got) != codes.InvalidArgument {
		t.Errorf("status.Code = %v", status.Code(got))
	}
	if s, _ := status.FromError(got); len(s.Details()) != 2 {
		t.Errorf("GRPCStatus lost the details: %v", s.Details())
	}
}

func TestCallErrorWithoutDetails(t *testing.T) {
	got := callError(status.Error(codes.ResourceExhausted, "received message larger than max"))
	var terr *Error
	if !errors.As(got, &terr) {
		t.Fatalf("callError = %T", got)
	}
	if terr.Code != codes.ResourceExhausted || terr.Reason != "" || terr.Domain != "" || terr.Violations != nil {
		t.Errorf("a refusal by gRPC itself has no details, got %+v", terr)
	}
	if callError(nil) != nil {
		t.Error("callError(nil) must be nil")
	}
}

func TestErrorIs(t *testing.T) {
	st := withDetails(t, status.New(codes.NotFound, "no task 42"), &errdetails.ErrorInfo{Reason: "TASK_NOT_FOUND", Domain: Domain})
	err := callError(st.Err())
	if !errors.Is(err, ErrTaskNotFound) {
		t.Error("want errors.Is(err, ErrTaskNotFound)")
	}
	if errors.Is(err, ErrTaskAlreadyFinal) || errors.Is(err, context.DeadlineExceeded) {
		t.Error("matched the wrong sentinel")
	}
	deadline := callError(status.Error(codes.DeadlineExceeded, "context deadline exceeded"))
	if !errors.Is(deadline, context.DeadlineExceeded) {
		t.Error("want errors.Is(err, context.DeadlineExceeded)")
	}
	if want := "taskyard: NotFound: no task 42 (TASK_NOT_FOUND)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}
