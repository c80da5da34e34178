package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	"google.golang.org/grpc/codes"
)

// refusal is what a caller learns from a NOT_FOUND: code, reason and message,
// with the id asked for replaced, so another tenant's task and a missing one
// compare equal when they answer alike.
type refusal struct{ code, reason, message string }

func notFound(call func(id string) error, id string) (refusal, error) {
	terr, err := expectError(call(id), codes.NotFound, "TASK_NOT_FOUND")
	if err != nil {
		return refusal{}, err
	}
	return refusal{terr.Code.String(), terr.Reason, strings.ReplaceAll(terr.Message, id, "<id>")}, nil
}

// sameAsMissing checks that call answers id exactly as it answers a random
// missing id.
func sameAsMissing(what string, call func(id string) error, id string) error {
	other, err := notFound(call, id)
	if err != nil {
		return fmt.Errorf("%s of another tenant's task: %w", what, err)
	}
	missing, err := notFound(call, newUUID())
	if err != nil {
		return fmt.Errorf("%s of a missing id: %w", what, err)
	}
	if other != missing {
		return fmt.Errorf("%s of another tenant's task answered %+v, of a missing id %+v", what, other, missing)
	}
	return nil
}

func tenantIsolation(ctx context.Context, e *env) error {
	if e.admin == nil {
		return errors.New("TASKYARD_ADMIN_TOKEN is not set")
	}
	a, b := os.Getenv("TASKYARD_TENANT_A"), os.Getenv("TASKYARD_TENANT_B")
	ca, err := e.dial(e.target, os.Getenv("TASKYARD_TENANT_A_TOKEN"))
	if err != nil {
		return err
	}
	defer ca.Close()
	cb, err := e.dial(e.target, os.Getenv("TASKYARD_TENANT_B_TOKEN"))
	if err != nil {
		return err
	}
	defer cb.Close()
	if a == "" || b == "" {
		return errors.New("TASKYARD_TENANT_A/B and their _TOKEN are not set")
	}

	mine, err := ca.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		return err
	}
	done, _, err := ca.Wait(ctx, mine.ID, 30*time.Second)
	if err != nil {
		return err
	}
	if done.State != taskyard.StateSuccess || done.Tenant != a {
		return fmt.Errorf("A's task %s: %s of tenant %q", mine.ID, done.State, done.Tenant)
	}
	theirs, err := cb.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{4, 4}})
	if err != nil {
		return err
	}
	if t, _, err := cb.Wait(ctx, theirs.ID, 30*time.Second); err != nil || !t.Final() {
		return fmt.Errorf("B's task %s not final after 30 s (%v)", theirs.ID, err)
	}

	calls := []struct {
		what string
		call func(id string) error
	}{
		{"A's get", func(id string) error { _, err := ca.Get(ctx, id); return err }},
		{"A's cancel", func(id string) error { _, err := ca.Cancel(ctx, id, taskyard.CancelOptions{}); return err }},
		{"A's wait", func(id string) error { _, _, err := ca.Wait(ctx, id, time.Second); return err }},
	}
	for _, c := range calls {
		if err := sameAsMissing(c.what, c.call, theirs.ID); err != nil {
			return err
		}
	}
	if err := sameAsMissing("B's get", func(id string) error { _, err := cb.Get(ctx, id); return err }, mine.ID); err != nil {
		return err
	}
	page, err := ca.List(ctx, taskyard.ListOptions{PageSize: 100})
	if err != nil {
		return err
	}
	found := false
	for _, t := range page.Tasks {
		if t.ID == theirs.ID || t.Tenant != a {
			return fmt.Errorf("A's list holds task %s of tenant %q", t.ID, t.Tenant)
		}
		found = found || t.ID == mine.ID
	}
	if !found {
		return fmt.Errorf("A's list does not hold its task %s", mine.ID)
	}
	if _, err := ca.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 1}}); err != nil {
		return err
	}
	first, err := ca.List(ctx, taskyard.ListOptions{PageSize: 1})
	if err != nil {
		return err
	}
	if first.NextPageToken == "" {
		return errors.New("A's first page of 1 task has no next page token")
	}
	borrowed, err := cb.List(ctx, taskyard.ListOptions{PageSize: 100, PageToken: first.NextPageToken})
	if err != nil {
		return fmt.Errorf("B's list from A's page token: %w", err)
	}
	for _, t := range borrowed.Tasks {
		if t.ID == mine.ID || t.Tenant != b {
			return fmt.Errorf("B's list from A's page token holds task %s of tenant %q", t.ID, t.Tenant)
		}
	}
	_, err = ca.Tenants().Create(ctx, taskyard.Tenant{Name: "conformance-" + hexSuffix()})
	if _, err := expectError(err, codes.PermissionDenied, ""); err != nil {
		return fmt.Errorf("a tenant token creating a tenant: %w", err)
	}
	aAsB, err := taskyard.New(e.target, taskyard.WithInsecure(), taskyard.WithToken(os.Getenv("TASKYARD_TENANT_A_TOKEN")), taskyard.WithTenant(b))
	if err != nil {
		return err
	}
	defer aAsB.Close()
	_, err = aAsB.Get(ctx, theirs.ID)
	if _, err := expectError(err, codes.PermissionDenied, "OPERATOR_ONLY"); err != nil {
		return fmt.Errorf("a tenant token acting as another tenant: %w", err)
	}
	for id, want := range map[string]string{mine.ID: a, theirs.ID: b} {
		t, err := e.admin.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("the operator's get of %s: %w", id, err)
		}
		if t.Tenant != want {
			return fmt.Errorf("the operator sees task %s of tenant %q, want %q", id, t.Tenant, want)
		}
	}
	return operatorTenant(ctx, e)
}

// operatorTenant: the operator creates, lists, suspends and resumes a tenant,
// and acts as it.
func operatorTenant(ctx context.Context, e *env) error {
	name := "conformance-" + hexSuffix()
	made, err := e.admin.Tenants().Create(ctx, taskyard.Tenant{Name: name, MaxConcurrency: 5, Weight: 2})
	if err != nil {
		return err
	}
	if made.Name != name || made.State != taskyard.TenantActive || made.MaxConcurrency != 5 || made.Weight != 2 {
		return fmt.Errorf("created %+v", made)
	}
	got, err := e.admin.Tenants().Get(ctx, name)
	if err != nil {
		return err
	}
	if got.MaxConcurrency != 5 || got.Weight != 2 {
		return fmt.Errorf("got %+v", got)
	}
	listed := false
	for t, err := range e.admin.Tenants().All(ctx, taskyard.TenantListOptions{}) {
		if err != nil {
			return err
		}
		listed = listed || t.Name == name
	}
	if !listed {
		return fmt.Errorf("%s not among the tenants listed", name)
	}
	gone, err := e.admin.Tenants().Suspend(ctx, name, "conformance")
	if err != nil {
		return err
	}
	if gone.State != taskyard.TenantSuspended || gone.SuspendedAt.IsZero() {
		return fmt.Errorf("suspended %+v", gone)
	}
	acting, err := taskyard.New(e.target, taskyard.WithInsecure(), taskyard.WithToken(os.Getenv("TASKYARD_ADMIN_TOKEN")), taskyard.WithTenant(name))
	if err != nil {
		return err
	}
	defer acting.Close()
	_, err = acting.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 2}})
	if _, err := expectError(err, codes.FailedPrecondition, "TENANT_SUSPENDED"); err != nil {
		return fmt.Errorf("a submission of the suspended tenant: %w", err)
	}
	back, err := e.admin.Tenants().Resume(ctx, name)
	if err != nil {
		return err
	}
	if back.State != taskyard.TenantActive {
		return fmt.Errorf("resumed %+v", back)
	}
	s, err := acting.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 2}})
	if err != nil {
		return err
	}
	done, _, err := acting.Wait(ctx, s.ID, 30*time.Second)
	if err != nil {
		return err
	}
	var sum int
	if done.State != taskyard.StateSuccess || done.DecodeResult(&sum) != nil || sum != 3 || done.Tenant != name {
		return fmt.Errorf("task %s: %s, result %v, tenant %q", s.ID, done.State, done.Result, done.Tenant)
	}
	return nil
}

func hexSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
