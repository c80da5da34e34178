package taskyard

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fakeTenants keeps tenants by name and, for each call, the tenant its
// metadata named.
type fakeTenants struct {
	taskyardv1.UnimplementedTenantServiceServer
	mu      sync.Mutex
	tenants map[string]*taskyardv1.Tenant
	suspend []*taskyardv1.SuspendTenantRequest
	acting  []string
}

func (f *fakeTenants) seen(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.acting = append(f.acting, strings.Join(md.Get(TenantMetadataKey), ","))
}

func (f *fakeTenants) CreateTenant(ctx context.Context, req *taskyardv1.CreateTenantRequest) (*taskyardv1.CreateTenantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	t := req.GetTenant()
	if _, ok := f.tenants[t.GetName()]; ok {
		return nil, status.Error(codes.AlreadyExists, "taken")
	}
	t.State = taskyardv1.TenantState_TENANT_STATE_ACTIVE
	t.CreatedAt = timestamppb.New(time.Unix(1_800_000_000, 0))
	f.tenants[t.GetName()] = t
	return &taskyardv1.CreateTenantResponse{Tenant: t}, nil
}

func (f *fakeTenants) GetTenant(ctx context.Context, req *taskyardv1.GetTenantRequest) (*taskyardv1.GetTenantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	t, ok := f.tenants[req.GetName()]
	if !ok {
		return nil, status.Error(codes.NotFound, "no such tenant")
	}
	return &taskyardv1.GetTenantResponse{Tenant: t}, nil
}

func (f *fakeTenants) ListTenants(ctx context.Context, req *taskyardv1.ListTenantsRequest) (*taskyardv1.ListTenantsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	// Two pages: "a" then "b".
	if req.GetPageToken() == "" {
		return &taskyardv1.ListTenantsResponse{Tenants: []*taskyardv1.Tenant{{Name: "a"}}, NextPageToken: "after-a"}, nil
	}
	return &taskyardv1.ListTenantsResponse{Tenants: []*taskyardv1.Tenant{{Name: "b"}}}, nil
}

func (f *fakeTenants) UpdateTenant(ctx context.Context, req *taskyardv1.UpdateTenantRequest) (*taskyardv1.UpdateTenantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.tenants[req.GetTenant().GetName()] = req.GetTenant()
	return &taskyardv1.UpdateTenantResponse{Tenant: req.GetTenant()}, nil
}

func (f *fakeTenants) SuspendTenant(ctx context.Context, req *taskyardv1.SuspendTenantRequest) (*taskyardv1.SuspendTenantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	f.suspend = append(f.suspend, req)
	t := f.tenants[req.GetName()]
	t.State = taskyardv1.TenantState_TENANT_STATE_SUSPENDED
	t.SuspendedAt = timestamppb.New(time.Unix(1_800_000_100, 0))
	return &taskyardv1.SuspendTenantResponse{Tenant: t}, nil
}

func (f *fakeTenants) ResumeTenant(ctx context.Context, req *taskyardv1.ResumeTenantRequest) (*taskyardv1.ResumeTenantResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen(ctx)
	t := f.tenants[req.GetName()]
	t.State = taskyardv1.TenantState_TENANT_STATE_ACTIVE
	t.SuspendedAt = nil
	return &taskyardv1.ResumeTenantResponse{Tenant: t}, nil
}

func startTenants(t *testing.T, f *fakeTenants, opts ...Option) *Client {
	t.Helper()
	f.tenants = map[string]*taskyardv1.Tenant{}
	return startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterTenantServiceServer(srv, f) }, opts...)
}

func TestTenantsAreCreatedReadUpdatedSuspendedAndResumed(t *testing.T) {
	f := &fakeTenants{}
	c := startTenants(t, f)
	ctx := context.Background()
	made, err := c.Tenants().Create(ctx, Tenant{
		Name:           "acme",
		MaxConcurrency: 50,
		Rate:           &RateLimit{Units: 100, Period: time.Second, Burst: 20},
		Weight:         2,
		Description:    "the acme team",
	})
	if err != nil {
		t.Fatal(err)
	}
	if made.State != TenantActive || made.MaxConcurrency != 50 || made.Weight != 2 || made.Description != "the acme team" {
		t.Fatalf("created %+v", made)
	}
	if made.Rate == nil || *made.Rate != (RateLimit{Units: 100, Period: time.Second, Burst: 20}) {
		t.Fatalf("rate %+v", made.Rate)
	}
	if !made.CreatedAt.Equal(time.Unix(1_800_000_000, 0)) {
		t.Errorf("created at %v", made.CreatedAt)
	}
	if _, err := c.Tenants().Create(ctx, Tenant{Name: "acme"}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("a second create: %v", err)
	}
	updated, err := c.Tenants().Update(ctx, Tenant{Name: "acme", MaxConcurrency: 9})
	if err != nil {
		t.Fatal(err)
	}
	// The whole definition is sent: what was left zero is reset.
	if updated.MaxConcurrency != 9 || updated.Rate != nil || updated.Weight != 0 {
		t.Errorf("updated %+v", updated)
	}
	gone, err := c.Tenants().Suspend(ctx, "acme", "invoice overdue")
	if err != nil {
		t.Fatal(err)
	}
	if gone.State != TenantSuspended || gone.SuspendedAt.IsZero() || f.suspend[0].GetReason() != "invoice overdue" {
		t.Errorf("suspended %+v, sent %v", gone, f.suspend)
	}
	back, err := c.Tenants().Resume(ctx, "acme")
	if err != nil || back.State != TenantActive || !back.SuspendedAt.IsZero() {
		t.Errorf("resumed %+v, %v", back, err)
	}
	if _, err := c.Tenants().Get(ctx, "globex"); status.Code(err) != codes.NotFound {
		t.Errorf("a missing tenant: %v", err)
	}
}

func TestAllTenantsFollowsThePages(t *testing.T) {
	c := startTenants(t, &fakeTenants{})
	var names []string
	for tenant, err := range c.Tenants().All(context.Background(), TenantListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tenant.Name)
	}
	if strings.Join(names, ",") != "a,b" {
		t.Errorf("listed %v", names)
	}
	if _, err := c.Tenants().List(context.Background(), TenantListOptions{PageSize: MaxPageSize + 1}); err == nil {
		t.Error("a page size over the maximum was sent")
	}
}

func TestWithTenantSendsTheTenantOnEveryCall(t *testing.T) {
	f := &fakeTenants{}
	c := startTenants(t, f, WithTenant("acme"))
	if c.Tenant() != "acme" {
		t.Errorf("Tenant() = %q", c.Tenant())
	}
	ctx := context.Background()
	_, _ = c.Tenants().Get(ctx, "acme")
	for _, err := range c.Tenants().All(ctx, TenantListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	plain := startTenants(t, f)
	_, _ = plain.Tenants().Get(ctx, "acme")
	if strings.Join(f.acting, "|") != "acme|acme|acme|" {
		t.Errorf("taskyard-tenant sent: %q", f.acting)
	}
}

func TestABadTenantNameIsRefusedByNew(t *testing.T) {
	for _, name := range []string{"Acme", "a/b", strings.Repeat("x", 65)} {
		_, err := New("127.0.0.1:1", WithInsecure(), WithTenant(name))
		if err == nil || !strings.Contains(err.Error(), "a tenant is 1 to 64 characters of [a-z0-9-]") {
			t.Errorf("WithTenant(%q): %v", name, err)
		}
	}
	c, err := New("127.0.0.1:1", WithInsecure(), WithTenant(""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Tenant() != "" {
		t.Errorf("an empty tenant: %q", c.Tenant())
	}
}

func TestATaskSaysItsTenant(t *testing.T) {
	if got := taskFromProto(&taskyardv1.Task{Id: "t1", Tenant: "acme"}).Tenant; got != "acme" {
		t.Errorf("tenant %q", got)
	}
}

func TestTheTenantSentinelsMatchTheGatewaysRefusals(t *testing.T) {
	suspended := fromStatus(status.New(codes.FailedPrecondition, "tenant 'acme' is suspended"))
	suspended.Reason = "TENANT_SUSPENDED"
	if !errors.Is(suspended, ErrTenantSuspended) || errors.Is(suspended, ErrOperatorOnly) {
		t.Errorf("%v", suspended)
	}
}
