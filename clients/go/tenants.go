package taskyard

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TenantMetadataKey is the gRPC metadata key with which an operator token acts
// as one tenant ([WithTenant]).
const TenantMetadataKey = "taskyard-tenant"

// A tenant's name, as the gateway checks it.
var tenantName = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// TenantState is a tenant's state.
type TenantState int32

const (
	TenantStateUnspecified TenantState = 0
	// Its tasks are dispatched and its submissions taken.
	TenantActive TenantState = 1
	// Its submissions are refused (FAILED_PRECONDITION, reason
	// TENANT_SUSPENDED) and its tasks wait, queued, until it is resumed.
	TenantSuspended TenantState = 2
)

func (s TenantState) String() string {
	switch s {
	case TenantActive:
		return "ACTIVE"
	case TenantSuspended:
		return "SUSPENDED"
	}
	return "UNSPECIFIED"
}

// A Tenant is a team or customer sharing the suite: its own tasks, queues,
// schedules and limits, a quota and a weight in fair share (docs/tenants.md).
type Tenant struct {
	// 1 to 64 characters of [a-z0-9-].
	Name string
	// Output only.
	State TenantState
	// Attempts of its tasks running at once; zero: no bound.
	MaxConcurrency int64
	// Attempts of its tasks started per period; nil: no bound.
	Rate *RateLimit
	// Its share in fair share against the other tenants, 1 to 1000; zero: 1.
	Weight int
	// At most 1,024 characters.
	Description string
	// Output only.
	CreatedAt   time.Time
	UpdatedAt   time.Time
	SuspendedAt time.Time // set while suspended
}

// TenantListOptions page a listing of tenants.
type TenantListOptions struct {
	PageSize int // 1..1000; zero: 100
	// Where to start: a previous TenantPage's NextPageToken; empty: the first page.
	PageToken string
}

// A TenantPage is one page of tenants, by name.
type TenantPage struct {
	Tenants []*Tenant
	// Pass it as TenantListOptions.PageToken for the next page; empty on the last.
	NextPageToken string
}

// Tenants manages tenants (TenantService). Every call but Get takes an
// operator token (one without tenant= in the gateway's tokens file): a tenant
// token gets PERMISSION_DENIED, reason OPERATOR_ONLY. A tenant token may Get
// its own tenant. Get it with [Client.Tenants].
type Tenants struct {
	c *Client
}

// Tenants is the client's handle on tenants.
func (c *Client) Tenants() *Tenants { return &Tenants{c: c} }

// Create stores a new tenant, active; a name already taken is ALREADY_EXISTS.
func (t *Tenants) Create(ctx context.Context, tenant Tenant) (*Tenant, error) {
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.CreateTenant(ctx, &taskyardv1.CreateTenantRequest{Tenant: tenant.proto()})
	if err != nil {
		return nil, callError(err)
	}
	return tenantFromProto(resp.GetTenant()), nil
}

// Get returns the tenant named name; NOT_FOUND when there is none (or, for a
// tenant token, when it is not its own).
func (t *Tenants) Get(ctx context.Context, name string) (*Tenant, error) {
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.GetTenant(ctx, &taskyardv1.GetTenantRequest{Name: name})
	if err != nil {
		return nil, callError(err)
	}
	return tenantFromProto(resp.GetTenant()), nil
}

// List returns one page of tenants, by name.
func (t *Tenants) List(ctx context.Context, opts TenantListOptions) (*TenantPage, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.ListTenants(ctx, &taskyardv1.ListTenantsRequest{
		PageSize:  int32(opts.PageSize),
		PageToken: opts.PageToken,
	})
	if err != nil {
		return nil, callError(err)
	}
	page := &TenantPage{Tenants: make([]*Tenant, len(resp.GetTenants())), NextPageToken: resp.GetNextPageToken()}
	for i, p := range resp.GetTenants() {
		page.Tenants[i] = tenantFromProto(p)
	}
	return page, nil
}

// All iterates over every tenant, fetching pages of opts.PageSize as the loop
// needs them; it ends as [Client.Tasks] does.
func (t *Tenants) All(ctx context.Context, opts TenantListOptions) iter.Seq2[*Tenant, error] {
	return pages(opts.PageToken, func(token string) ([]*Tenant, string, error) {
		opts.PageToken = token
		page, err := t.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Tenants, page.NextPageToken, nil
	})
}

// Update replaces the quota, the weight and the description of the tenant
// named tenant.Name (what is left zero is reset); no such tenant is NOT_FOUND.
func (t *Tenants) Update(ctx context.Context, tenant Tenant) (*Tenant, error) {
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.UpdateTenant(ctx, &taskyardv1.UpdateTenantRequest{Tenant: tenant.proto()})
	if err != nil {
		return nil, callError(err)
	}
	return tenantFromProto(resp.GetTenant()), nil
}

// Suspend stops the tenant's dispatch and refuses its submissions; nothing it
// had is lost, and attempts already running finish. reason is kept in the
// audit event (tenant.suspended).
func (t *Tenants) Suspend(ctx context.Context, name, reason string) (*Tenant, error) {
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.SuspendTenant(ctx, &taskyardv1.SuspendTenantRequest{Name: name, Reason: reason})
	if err != nil {
		return nil, callError(err)
	}
	return tenantFromProto(resp.GetTenant()), nil
}

// Resume dispatches the tenant's tasks and takes its submissions again.
func (t *Tenants) Resume(ctx context.Context, name string) (*Tenant, error) {
	ctx, cancel := t.c.callContext(ctx, 0)
	defer cancel()
	resp, err := t.c.tenants.ResumeTenant(ctx, &taskyardv1.ResumeTenantRequest{Name: name})
	if err != nil {
		return nil, callError(err)
	}
	return tenantFromProto(resp.GetTenant()), nil
}

// proto converts the tenant to send; its output-only fields are left out.
func (t Tenant) proto() *taskyardv1.Tenant {
	p := &taskyardv1.Tenant{
		Name:        t.Name,
		Weight:      int32(t.Weight),
		Description: t.Description,
		Quota:       &taskyardv1.TenantQuota{MaxConcurrency: t.MaxConcurrency},
	}
	if t.Rate != nil {
		p.Quota.Rate = &taskyardv1.RateLimit{Units: t.Rate.Units, Period: durationpb.New(t.Rate.Period), Burst: t.Rate.Burst}
	}
	return p
}

func tenantFromProto(p *taskyardv1.Tenant) *Tenant {
	if p == nil {
		return nil
	}
	t := &Tenant{
		Name:           p.GetName(),
		State:          TenantState(p.GetState()),
		MaxConcurrency: p.GetQuota().GetMaxConcurrency(),
		Weight:         int(p.GetWeight()),
		Description:    p.GetDescription(),
		CreatedAt:      timestamp(p.GetCreatedAt()),
		UpdatedAt:      timestamp(p.GetUpdatedAt()),
		SuspendedAt:    timestamp(p.GetSuspendedAt()),
	}
	if r := p.GetQuota().GetRate(); r != nil {
		t.Rate = &RateLimit{Units: r.GetUnits(), Period: duration(r.GetPeriod()), Burst: r.GetBurst()}
	}
	return t
}

// WithTenant has an operator token act as tenant name: every call carries
// the taskyard-tenant metadata, and the gateway answers exactly as it would
// that tenant's token (its tasks, queues, schedules and limits), keeping the
// operator-only calls. A tenant token sending another tenant's name is
// refused (PERMISSION_DENIED, reason OPERATOR_ONLY). New fails for a name
// outside [a-z0-9-]{1,64}; an empty name sends none.
func WithTenant(name string) Option {
	return func(c *config) {
		if name != "" && !tenantName.MatchString(name) {
			c.err = fmt.Errorf("taskyard: WithTenant: a tenant is 1 to 64 characters of [a-z0-9-], not %q", name)
			return
		}
		c.tenant = name
	}
}

// tenantInterceptors put the tenant on every call's outgoing metadata.
func tenantInterceptors(tenant string) []grpc.DialOption {
	if tenant == "" {
		return nil
	}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, TenantMetadataKey, tenant), method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(metadata.AppendToOutgoingContext(ctx, TenantMetadataKey, tenant), desc, cc, method, opts...)
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}
