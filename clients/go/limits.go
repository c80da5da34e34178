package taskyard

import (
	"context"
	"iter"
	"math"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A LimitUse is a task's use of one limit (Spec.Limits): Units units of the
// limit named Limit, in the bucket Key.
type LimitUse struct {
	Limit string
	// The bucket of a per-key limit, e.g. "customer:42" (at most 256 bytes);
	// a global limit ignores it.
	Key string
	// Units the task takes; zero: 1. At most the limit's burst (rate) or its
	// MaxUnits (concurrency); a breaker takes none, whatever is given.
	Units int64
}

// A Limit is a named rate limit, concurrency limit or circuit breaker that
// the scheduler applies when it admits a task that uses it
// (docs/flow-control.md).
type Limit struct {
	// 1 to 128 characters: an ASCII letter or digit, then letters, digits,
	// '.', '_', ':' or '-'.
	Name string
	// Exactly one of Rate, Concurrency and Breaker.
	Rate        *RateLimit
	Concurrency *ConcurrencyLimit
	Breaker     *CircuitBreaker
	// True: every key of a LimitUse has its own bucket ("at most 3 per
	// customer"); false: one bucket for all.
	PerKey      bool
	Description string
	// Set on a limit a task declares (@task(rate_limit=..., concurrency=...)):
	// every task of that name uses it, keyed by its keyword argument
	// KeyArgument.
	TaskName    string
	KeyArgument string
	// Output only.
	CreatedAt time.Time
	UpdatedAt time.Time
	// Output only: the leading scheduler's live view; nil when no scheduler
	// answered.
	Usage *LimitUsage
}

// A RateLimit admits at most Units per Period, in bursts of up to Burst.
type RateLimit struct {
	Units  int64
	Period time.Duration // 1 ms to 1 day, in whole milliseconds
	Burst  int64         // zero: Units
}

// A ConcurrencyLimit holds at most MaxUnits units in attempts leased to a pool
// or running.
type ConcurrencyLimit struct {
	MaxUnits int64
}

// A CircuitBreaker opens when FailureThreshold attempts that use it failed
// within Window (a throttling answer or any other failure), holds its tasks
// for CoolDown, then admits HalfOpenProbes attempts at once: a probe's success
// closes it, a probe's failure opens it again. With Limit.PerKey each key of
// a LimitUse (a downstream, e.g. "payments-api") has a breaker of its own.
type CircuitBreaker struct {
	FailureThreshold int64 // 1 to 1,000,000
	// How far back attempts count: 1 ms to 1 day, whole milliseconds; zero:
	// unset, 60 s.
	Window time.Duration
	// Attempts ended within Window before it may open, at most 1,000,000;
	// zero: FailureThreshold.
	MinAttempts int64
	// How long it stays open before a probe: 1 ms to 1 day, whole
	// milliseconds; zero: unset, 30 s.
	CoolDown time.Duration
	// Attempts admitted at once while half-open, at most 1000; zero: 1.
	HalfOpenProbes int64
}

// LimitUsage is what a limit holds back now, on the leading scheduler.
type LimitUsage struct {
	// Units held (concurrency) or admitted in the last period (rate), all keys;
	// for a breaker, its keys that are open or half-open now.
	UnitsInUse int64
	// Attempts admitted and held back since the scheduler's term began.
	Admitted  int64
	Throttled int64
	// Queued tasks waiting at this limit now.
	Waiting int64
	// Keys with a bucket now.
	Keys int64
	// The busiest keys, at most 10.
	BusiestKeys []KeyUsage
}

// KeyUsage is one key's share of a LimitUsage.
type KeyUsage struct {
	Key        string
	UnitsInUse int64
	Waiting    int64
}

// A KeyWeight is a fairness key's share of its lane: a key of weight 3 is
// served three tasks for every one of a key of weight 1 while both wait.
type KeyWeight struct {
	Key    string
	Weight int // 1 to 1000; keys without one have 1
}

// LimitListOptions page a listing of limits.
type LimitListOptions struct {
	PageSize int // 1..1000; zero: 100
	// Where to start: a previous LimitPage's NextPageToken; empty: the first page.
	PageToken string
}

// A LimitPage is one page of limits, by name.
type LimitPage struct {
	Limits []*Limit
	// Pass it as LimitListOptions.PageToken for the next page; empty on the last.
	NextPageToken string
}

// DeleteLimitOptions tune Limits.Delete.
type DeleteLimitOptions struct {
	// Delete it even while tasks that are not final use it: they run without it.
	Force bool
}

// Limits manages named limits and fairness weights (LimitService): changes
// take a token with the admin scope, reads the read scope. Get it with
// [Client.Limits].
type Limits struct {
	c *Client
}

// Limits is the client's handle on limits and fairness weights.
func (c *Client) Limits() *Limits { return &Limits{c: c} }

// Create stores a new limit; a name already taken is ALREADY_EXISTS.
func (l *Limits) Create(ctx context.Context, limit Limit) (*Limit, error) {
	p, err := limit.proto()
	if err != nil {
		return nil, err
	}
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.CreateLimit(ctx, &taskyardv1.CreateLimitRequest{Limit: p})
	if err != nil {
		return nil, callError(err)
	}
	return limitFromProto(resp.GetLimit()), nil
}

// Get returns the limit named name, with its usage when the scheduler answers.
func (l *Limits) Get(ctx context.Context, name string) (*Limit, error) {
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.GetLimit(ctx, &taskyardv1.GetLimitRequest{Name: name})
	if err != nil {
		return nil, callError(err)
	}
	return limitFromProto(resp.GetLimit()), nil
}

// List returns one page of limits, by name.
func (l *Limits) List(ctx context.Context, opts LimitListOptions) (*LimitPage, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.ListLimits(ctx, &taskyardv1.ListLimitsRequest{
		PageSize:  int32(opts.PageSize),
		PageToken: opts.PageToken,
	})
	if err != nil {
		return nil, callError(err)
	}
	page := &LimitPage{Limits: make([]*Limit, len(resp.GetLimits())), NextPageToken: resp.GetNextPageToken()}
	for i, p := range resp.GetLimits() {
		page.Limits[i] = limitFromProto(p)
	}
	return page, nil
}

// All iterates over every limit, fetching pages of opts.PageSize as the loop
// needs them; it ends as [Client.Tasks] does.
func (l *Limits) All(ctx context.Context, opts LimitListOptions) iter.Seq2[*Limit, error] {
	return pages(opts.PageToken, func(token string) ([]*Limit, string, error) {
		opts.PageToken = token
		page, err := l.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Limits, page.NextPageToken, nil
	})
}

// Update replaces the definition of the limit named limit.Name; no such
// limit is NOT_FOUND.
func (l *Limits) Update(ctx context.Context, limit Limit) (*Limit, error) {
	p, err := limit.proto()
	if err != nil {
		return nil, err
	}
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.UpdateLimit(ctx, &taskyardv1.UpdateLimitRequest{Limit: p})
	if err != nil {
		return nil, callError(err)
	}
	return limitFromProto(resp.GetLimit()), nil
}

// Delete removes the limit named name. While tasks that are not final use it,
// it is FAILED_PRECONDITION unless opts.Force; then those tasks run without it,
// and released is how many they were.
func (l *Limits) Delete(ctx context.Context, name string, opts DeleteLimitOptions) (released int64, err error) {
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.DeleteLimit(ctx, &taskyardv1.DeleteLimitRequest{Name: name, Force: opts.Force})
	if err != nil {
		return 0, callError(err)
	}
	return resp.GetTasksReleased(), nil
}

// SetKeyWeight sets the fairness weight of key (1 to 1000); 0 removes it, so
// the key is back to weight 1.
func (l *Limits) SetKeyWeight(ctx context.Context, key string, weight int) (KeyWeight, error) {
	if weight < 0 || weight > math.MaxInt32 {
		return KeyWeight{}, errorf("weight.weight", "%d is out of range", weight)
	}
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.SetKeyWeight(ctx, &taskyardv1.SetKeyWeightRequest{
		Weight: &taskyardv1.KeyWeight{Key: key, Weight: int32(weight)},
	})
	if err != nil {
		return KeyWeight{}, callError(err)
	}
	return KeyWeight{Key: resp.GetWeight().GetKey(), Weight: int(resp.GetWeight().GetWeight())}, nil
}

// KeyWeights returns every fairness weight set, by key.
func (l *Limits) KeyWeights(ctx context.Context) ([]KeyWeight, error) {
	ctx, cancel := l.c.callContext(ctx, 0)
	defer cancel()
	resp, err := l.c.limits.ListKeyWeights(ctx, &taskyardv1.ListKeyWeightsRequest{})
	if err != nil {
		return nil, callError(err)
	}
	out := make([]KeyWeight, len(resp.GetWeights()))
	for i, w := range resp.GetWeights() {
		out[i] = KeyWeight{Key: w.GetKey(), Weight: int(w.GetWeight())}
	}
	return out, nil
}

// proto converts the limit to send; its output-only fields are left out.
func (l Limit) proto() (*taskyardv1.Limit, error) {
	p := &taskyardv1.Limit{
		Name:        l.Name,
		PerKey:      l.PerKey,
		Description: l.Description,
		TaskName:    l.TaskName,
		KeyArgument: l.KeyArgument,
	}
	kinds := 0
	for _, set := range []bool{l.Rate != nil, l.Concurrency != nil, l.Breaker != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return nil, errorf("limit", "set one of Rate, Concurrency and Breaker, not several")
	case l.Rate != nil:
		p.Kind = &taskyardv1.Limit_Rate{Rate: &taskyardv1.RateLimit{
			Units:  l.Rate.Units,
			Period: durationpb.New(l.Rate.Period),
			Burst:  l.Rate.Burst,
		}}
	case l.Concurrency != nil:
		p.Kind = &taskyardv1.Limit_Concurrency{Concurrency: &taskyardv1.ConcurrencyLimit{MaxUnits: l.Concurrency.MaxUnits}}
	case l.Breaker != nil:
		p.Kind = &taskyardv1.Limit_Breaker{Breaker: l.Breaker.proto()}
	}
	return p, nil
}

// proto leaves a zero Window or CoolDown unset, so the gateway applies its
// default; any other value is sent as given, for the gateway to check.
func (b *CircuitBreaker) proto() *taskyardv1.CircuitBreaker {
	p := &taskyardv1.CircuitBreaker{
		FailureThreshold: b.FailureThreshold,
		MinAttempts:      b.MinAttempts,
		HalfOpenProbes:   b.HalfOpenProbes,
	}
	if b.Window != 0 {
		p.Window = durationpb.New(b.Window)
	}
	if b.CoolDown != 0 {
		p.CoolDown = durationpb.New(b.CoolDown)
	}
	return p
}

func limitFromProto(p *taskyardv1.Limit) *Limit {
	if p == nil {
		return nil
	}
	l := &Limit{
		Name:        p.GetName(),
		PerKey:      p.GetPerKey(),
		Description: p.GetDescription(),
		TaskName:    p.GetTaskName(),
		KeyArgument: p.GetKeyArgument(),
		CreatedAt:   timestamp(p.GetCreatedAt()),
		UpdatedAt:   timestamp(p.GetUpdatedAt()),
	}
	if r := p.GetRate(); r != nil {
		l.Rate = &RateLimit{Units: r.GetUnits(), Period: duration(r.GetPeriod()), Burst: r.GetBurst()}
	}
	if c := p.GetConcurrency(); c != nil {
		l.Concurrency = &ConcurrencyLimit{MaxUnits: c.GetMaxUnits()}
	}
	if b := p.GetBreaker(); b != nil {
		l.Breaker = &CircuitBreaker{
			FailureThreshold: b.GetFailureThreshold(),
			Window:           duration(b.GetWindow()),
			MinAttempts:      b.GetMinAttempts(),
			CoolDown:         duration(b.GetCoolDown()),
			HalfOpenProbes:   b.GetHalfOpenProbes(),
		}
	}
	if u := p.GetUsage(); u != nil {
		l.Usage = &LimitUsage{
			UnitsInUse: u.GetUnitsInUse(),
			Admitted:   u.GetAdmitted(),
			Throttled:  u.GetThrottled(),
			Waiting:    u.GetWaiting(),
			Keys:       u.GetKeys(),
		}
		for _, k := range u.GetBusiestKeys() {
			l.Usage.BusiestKeys = append(l.Usage.BusiestKeys, KeyUsage{Key: k.GetKey(), UnitsInUse: k.GetUnitsInUse(), Waiting: k.GetWaiting()})
		}
	}
	return l
}

func usesToProto(uses []LimitUse) []*taskyardv1.LimitUse {
	if len(uses) == 0 {
		return nil
	}
	out := make([]*taskyardv1.LimitUse, len(uses))
	for i, u := range uses {
		out[i] = &taskyardv1.LimitUse{Limit: u.Limit, Key: u.Key, Units: u.Units}
	}
	return out
}

func usesFromProto(uses []*taskyardv1.LimitUse) []LimitUse {
	if len(uses) == 0 {
		return nil
	}
	out := make([]LimitUse, len(uses))
	for i, u := range uses {
		out[i] = LimitUse{Limit: u.GetLimit(), Key: u.GetKey(), Units: u.GetUnits()}
	}
	return out
}
