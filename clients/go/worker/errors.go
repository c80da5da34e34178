package worker

import (
	"errors"
	"fmt"
	"time"
)

// Causes of a task body's context ending, for context.Cause:
//
//	if errors.Is(context.Cause(ctx), worker.ErrCancelled) { ... }
var (
	// ErrCancelled: the task was cancelled (a Cancel from the gateway). Stop
	// and return; the task ends CANCELLED whatever the body returns.
	ErrCancelled = errors.New("worker: task cancelled")
	// ErrRevoked: the attempt's lease is gone (a cancel not honoured in time,
	// or its timeout). Whatever the body reports later is refused.
	ErrRevoked = errors.New("worker: attempt's lease revoked")
	// ErrTimeout: the attempt's deadline passed (ctx.Err() is
	// context.DeadlineExceeded); the gateway has failed it with TimeoutError.
	ErrTimeout = errors.New("worker: attempt timed out")
	// ErrConnectionLost: the stream to the gateway broke. The suite treats the
	// attempt as one of a pool that died; the body's outcome is not reported.
	ErrConnectionLost = errors.New("worker: connection to the gateway lost")
	// ErrDrainTimeout: a drain took longer than Config.DrainTimeout; the
	// bodies still running are abandoned (Run returns this error too).
	ErrDrainTimeout = errors.New("worker: drain timed out")
)

// An Error is a failure with a type of its own, shown as the failure's type
// (in GetTask, the dead letters' failure groups): [Errorf] makes one. Other
// errors are typed by their Go type, such as "*fs.PathError".
type Error struct {
	Type    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf is an error of type typ whose message is formatted as fmt.Sprintf does.
//
//	return nil, worker.Errorf("Flaky", "attempt %d", t.Attempt)
func Errorf(typ, format string, args ...any) error {
	return &Error{Type: typ, Message: fmt.Sprintf(format, args...)}
}

// fatalError marks an error not retryable.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// Fatal marks err as not retryable: the task fails at once, whatever retries
// it has left. Fatal(nil) is nil.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatalError{err: err}
}

// retryAfterError asks for a delay before the next attempt.
type retryAfterError struct {
	delay time.Duration
	err   error
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter is err, retried no sooner than d after this attempt fails
// (instead of the suite's backoff). RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{delay: d, err: err}
}

// failureType names err's type: an [*Error]'s Type, else the Go type of the
// first error in its chain that is not a wrapper (of this package or fmt's),
// so that fmt.Errorf("reading: %w", err) is typed by what it wraps.
func failureType(err error) string {
	var typed *Error
	if errors.As(err, &typed) {
		return typed.Type
	}
	for {
		var next error
		switch e := err.(type) {
		case *fatalError:
			next = e.err
		case *retryAfterError:
			next = e.err
		case interface{ Unwrap() error }:
			if t := fmt.Sprintf("%T", err); t == "*fmt.wrapError" {
				next = e.Unwrap()
			}
		}
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}
