package taskyard

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Domain is the ErrorInfo domain of the gateway's own refusals.
const Domain = "taskyard.dev"

// Error is a call the gateway (or gRPC) refused. Find it with errors.As:
//
//	var terr *taskyard.Error
//	if errors.As(err, &terr) && terr.Reason == "UNKNOWN_TASK_NAME" { ... }
//
// Reason, Domain and Metadata come from the status's google.rpc.ErrorInfo,
// Violations from its google.rpc.BadRequest. A refusal by gRPC itself (a
// message over the gateway's size limit, no gateway listening, the client's
// deadline) has none of them.
type Error struct {
	Code       codes.Code
	Message    string
	Reason     string
	Domain     string
	Metadata   map[string]string
	Violations []Violation

	status *status.Status
}

// A Violation is one bad field of a request, such as "tasks[1].name".
type Violation struct {
	Field       string
	Description string
	Reason      string
}

// Sentinels for errors.Is. They match an *Error with the same code and reason.
var (
	ErrTaskNotFound    = &Error{Code: codes.NotFound, Reason: "TASK_NOT_FOUND"}
	ErrUnknownTaskName = &Error{Code: codes.InvalidArgument, Reason: "UNKNOWN_TASK_NAME"}
	// A submit naming a limit that does not exist (Spec.Limits).
	ErrUnknownLimit     = &Error{Code: codes.InvalidArgument, Reason: "UNKNOWN_LIMIT"}
	ErrTaskAlreadyFinal = &Error{Code: codes.FailedPrecondition, Reason: "TASK_ALREADY_FINAL"}
	ErrTokenMissing     = &Error{Code: codes.Unauthenticated, Reason: "TOKEN_MISSING"}
	ErrTokenInvalid     = &Error{Code: codes.Unauthenticated, Reason: "TOKEN_INVALID"}
	ErrScopeMissing     = &Error{Code: codes.PermissionDenied, Reason: "SCOPE_MISSING"}
	// Tenants (docs/tenants.md): a submission of a suspended tenant, an
	// operator-only call with a tenant token (or a tenant token acting as
	// another tenant), a token whose tenant does not exist.
	ErrTenantSuspended = &Error{Code: codes.FailedPrecondition, Reason: "TENANT_SUSPENDED"}
	ErrOperatorOnly    = &Error{Code: codes.PermissionDenied, Reason: "OPERATOR_ONLY"}
	ErrTenantUnknown   = &Error{Code: codes.PermissionDenied, Reason: "TENANT_UNKNOWN"}
)

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "taskyard: %s: %s", e.Code, e.Message)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	return b.String()
}

// Is matches a sentinel of this package by code and reason, and
// context.DeadlineExceeded or context.Canceled by code alone, so a caller can
// test errors.Is(err, context.DeadlineExceeded) whatever ended the call.
func (e *Error) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	case context.Canceled:
		return e.Code == codes.Canceled
	}
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && t.Reason == e.Reason
}

// GRPCStatus lets status.FromError and status.Code read the original status.
func (e *Error) GRPCStatus() *status.Status {
	if e.status == nil {
		return status.New(e.Code, e.Message)
	}
	return e.status
}

// Violation returns the violation of field, if any.
func (e *Error) Violation(field string) (Violation, bool) {
	for _, v := range e.Violations {
		if v.Field == field {
			return v, true
		}
	}
	return Violation{}, false
}

// callError turns a failed call's error into an *Error. Errors that carry no
// gRPC status (which gRPC-Go does not return from calls) pass through.
func callError(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return fromStatus(st)
}

func fromStatus(st *status.Status) *Error {
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			e.Reason, e.Domain, e.Metadata = d.GetReason(), d.GetDomain(), d.GetMetadata()
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.Violations = append(e.Violations, Violation{Field: v.GetField(), Description: v.GetDescription(), Reason: v.GetReason()})
			}
		}
	}
	return e
}

// errorf is a client-side refusal (bad input caught before sending), shaped
// like the gateway's so callers handle both alike.
func errorf(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{
		Code:       codes.InvalidArgument,
		Message:    msg,
		Reason:     "INVALID_ARGUMENT",
		Violations: []Violation{{Field: field, Description: fmt.Sprintf(format, args...), Reason: "INVALID_ARGUMENT"}},
	}
}
