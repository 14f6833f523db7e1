package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed prices.json
var embedded []byte

// Unit is the only price unit a table may declare in its "unit" field: USD
// per million tokens (SPEC.md §4).
const Unit = "USD per million tokens"

// Rates are prices in USD per million tokens for each kind of token
// (SPEC.md §4: input, output, cache read, cache write).
type Rates struct {
	Input, Output, CacheRead, CacheWrite float64
	// CacheWrite1h is the price of 1-hour cache writes (SPEC.md §7.4);
	// CacheWrite is that of 5-minute writes.
	CacheWrite1h float64
}

// Tier is a long-context price (SPEC.md §4): its Rates, in USD per million
// tokens, apply to a request whose prompt (input + cache read + cache write
// tokens) is greater than AboveInputTokens.
type Tier struct {
	AboveInputTokens int64
	Rates
}

// Price is the price of one model (SPEC.md §4): the table entry's provider
// and model id (the entry that matched, which for a fallback is the upstream
// provider's), its base Rates in USD per million tokens, and its long-context
// Tiers sorted by ascending AboveInputTokens.
type Price struct {
	Provider, Model string
	Rates
	Tiers []Tier
}

// Tokens are the token counts of one billed usage record (SPEC.md §4):
// uncached input, output, cache read and cache write. Negative counts are
// treated as 0.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite int64
	// CacheWrite1h is the part of CacheWrite written to the 1-hour cache
	// (SPEC.md §7.4), priced at CacheWrite1h; the rest of CacheWrite is
	// priced at the 5-minute rate. It is clamped to [0, CacheWrite].
	CacheWrite1h int64
}

// Cost is a cost in USD per kind of token; Total is the sum of the four
// parts (SPEC.md §4).
type Cost struct {
	Input, Output, CacheRead, CacheWrite, Total float64
}

// RatesFor returns the rates, in USD per million tokens, that apply to a
// request whose prompt size (input + cache read + cache write tokens) is
// promptTokens: those of the tier with the highest AboveInputTokens below
// promptTokens, else the base rates (SPEC.md §4 long-context tiers).
func (p Price) RatesFor(promptTokens int64) Rates {
	r, best := p.Rates, int64(math.MinInt64)
	for _, t := range p.Tiers {
		if t.AboveInputTokens < promptTokens && t.AboveInputTokens > best {
			r, best = t.Rates, t.AboveInputTokens
		}
	}
	return r
}

// Cost prices one usage record in USD (SPEC.md §4): each token count times
// its rate per million tokens, with the tier chosen by the prompt size
// Input + CacheRead + CacheWrite. Total is the sum of the parts.
func (p Price) Cost(u Tokens) Cost {
	in, out, cr, cw := max(u.Input, 0), max(u.Output, 0), max(u.CacheRead, 0), max(u.CacheWrite, 0)
	cw1h := min(max(u.CacheWrite1h, 0), cw)
	r := p.RatesFor(in + cr + cw)
	c := Cost{
		Input:      float64(in) * r.Input / 1e6,
		Output:     float64(out) * r.Output / 1e6,
		CacheRead:  float64(cr) * r.CacheRead / 1e6,
		CacheWrite: float64(cw-cw1h) * r.CacheWrite / 1e6,
	}
	if cw1h > 0 {
		c.CacheWrite += float64(cw1h) * r.CacheWrite1h / 1e6
	}
	c.Total = c.Input + c.Output + c.CacheRead + c.CacheWrite
	return c
}

// Table is a parsed price table (SPEC.md §4): where its prices come from
// (Source, License), when they were taken (Retrieved, YYYY-MM-DD), their Unit
// (always "USD per million tokens") and free-text Notes. Its methods are safe
// for concurrent use.
type Table struct {
	Source, License, Retrieved, Unit, Notes string

	providers []*provider // in file order: the order aliases are tried
	byID      map[string]*provider
	ref       time.Time // Lookup's instant: 12:00 UTC on Retrieved

	mu    sync.RWMutex
	cache map[cacheKey]*model // resolved lookups, misses included
}

type cacheKey struct{ provider, model string }

type provider struct {
	id       string
	match    *matcher
	fallback []string
	upstream string
	models   []*model
}

type model struct {
	provider, id string
	match        *matcher // nil: the id itself
	base         period
	variants     []variant
}

type period struct {
	rates Rates
	tiers []Tier
}

type variant struct {
	period
	from               time.Time // zero: no date condition
	hasClock           bool
	clockFrom, clockTo int // seconds after 00:00 UTC
}

func (m *model) matches(id, lower string) bool {
	if m.match == nil {
		return lower == strings.ToLower(m.id)
	}
	return m.match.matches(id, lower)
}

// free reports whether every price of the model is 0.
func (m *model) free() bool {
	zero := func(p period) bool {
		for _, t := range p.tiers {
			if t.Rates != (Rates{}) {
				return false
			}
		}
		return p.rates == Rates{}
	}
	for _, v := range m.variants {
		if !zero(v.period) {
			return false
		}
	}
	return zero(m.base)
}

func (v *variant) applies(at time.Time) bool {
	if !v.from.IsZero() && at.Before(v.from) {
		return false
	}
	if v.hasClock {
		u := at.UTC()
		s := u.Hour()*3600 + u.Minute()*60 + u.Second()
		if v.clockFrom <= v.clockTo {
			return s >= v.clockFrom && s < v.clockTo
		}
		return s >= v.clockFrom || s < v.clockTo
	}
	return true
}

func (m *model) priceAt(at time.Time) Price {
	p := m.base
	for i := len(m.variants) - 1; i >= 0; i-- {
		if m.variants[i].applies(at) {
			p = m.variants[i].period
			break
		}
	}
	return Price{Provider: m.provider, Model: m.id, Rates: p.rates, Tiers: append([]Tier(nil), p.tiers...)}
}

var (
	defaultOnce  sync.Once
	defaultTable *Table
)

// Default returns the bundled price table (prices.json, USD per million
// tokens, SPEC.md §4), parsed once and shared.
func Default() *Table {
	defaultOnce.Do(func() {
		t, err := Parse(embedded)
		if err != nil {
			panic("pricing: bundled prices.json is invalid: " + err.Error())
		}
		defaultTable = t
	})
	return defaultTable
}

// DefaultSource returns the Source and Retrieved of the bundled table, as
// Default().Source and .Retrieved, without parsing its prices: it reads the
// top-level fields only up to both (the status line names the table in its
// answer cache's key and must not pay for the whole parse on a hit).
func DefaultSource() (source, retrieved string) {
	dec := json.NewDecoder(bytes.NewReader(embedded))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t := Default()
		return t.Source, t.Retrieved
	}
	var gotSource, gotRetrieved bool
	for dec.More() && !(gotSource && gotRetrieved) {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		switch tok {
		case "source":
			gotSource = json.Unmarshal(v, &source) == nil
		case "retrieved":
			gotRetrieved = json.Unmarshal(v, &retrieved) == nil
		}
	}
	if !gotSource || !gotRetrieved {
		t := Default()
		return t.Source, t.Retrieved
	}
	return strings.TrimSpace(source), strings.TrimSpace(retrieved)
}

// Load reads a price table in the bundled format from path, for
// `--pricing FILE` (SPEC.md §4). Errors name the file and what is wrong.
func Load(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pricing: reading %s: %w", path, err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("pricing: %s: %w", path, err)
	}
	return t, nil
}

// Lookup returns the price of model as served by provider, as it stood at the
// table's reference instant (12:00 UTC on Retrieved), in USD per million
// tokens. It reports false when the table has no price for it: such usage is
// unpriced, never $0 (SPEC.md §4). The matching rules are in the package
// documentation.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	return t.LookupAt(provider, model, time.Time{})
}

// LookupAt is Lookup at the instant at (a record's timestamp), so that dated
// price changes and time-of-day prices apply (SPEC.md §4). A zero at means
// the table's reference instant, as for Lookup.
func (t *Table) LookupAt(provider, model string, at time.Time) (Price, bool) {
	m := t.resolve(provider, model)
	if m == nil {
		return Price{}, false
	}
	if at.IsZero() {
		at = t.ref
	}
	return m.priceAt(at), true
}

// Prices returns every model entry of the table, in file order, priced at the
// table's reference instant (USD per million tokens, SPEC.md §4).
func (t *Table) Prices() []Price {
	var out []Price
	for _, p := range t.providers {
		for _, m := range p.models {
			out = append(out, m.priceAt(t.ref))
		}
	}
	return out
}

// Merge returns a new table in which over's entries are tried before t's
// (SPEC.md §4 `--pricing FILE`, when a user's file should add to the bundled
// table rather than replace it). For a provider in both, over's models come
// first and over's match rule, fallbacks and upstream separator replace t's
// where over sets them. Source, License, Retrieved and Notes are over's.
func (t *Table) Merge(over *Table) *Table {
	n := &Table{Source: over.Source, License: over.License, Retrieved: over.Retrieved, Unit: over.Unit, Notes: over.Notes,
		byID: map[string]*provider{}, ref: over.ref, cache: map[cacheKey]*model{}}
	add := func(p *provider) {
		if q := n.byID[p.id]; q != nil {
			q.models = append(q.models, p.models...)
			if q.match == nil {
				q.match = p.match
			}
			if q.fallback == nil {
				q.fallback = p.fallback
			}
			if q.upstream == "" {
				q.upstream = p.upstream
			}
			return
		}
		c := *p
		c.models = append([]*model(nil), p.models...)
		n.byID[c.id] = &c
		n.providers = append(n.providers, &c)
	}
	for _, p := range over.providers {
		add(p)
	}
	for _, p := range t.providers {
		add(p)
	}
	return n
}

// maxCache bounds the lookup cache; past it the cache starts again.
const maxCache = 1 << 16

func (t *Table) resolve(providerName, modelID string) *model {
	key := cacheKey{strings.ToLower(strings.TrimSpace(providerName)), strings.TrimSpace(modelID)}
	if key.provider == "" || key.model == "" {
		return nil
	}
	t.mu.RLock()
	m, ok := t.cache[key]
	t.mu.RUnlock()
	if ok {
		return m
	}
	m = t.find(key.provider, key.model)
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		t.cache = map[cacheKey]*model{}
	}
	t.cache[key] = m
	t.mu.Unlock()
	return m
}

// provider finds a provider by (lower-case) name: its id, else the first
// provider whose match rule holds.
func (t *Table) provider(name string) *provider {
	if p := t.byID[name]; p != nil {
		return p
	}
	for _, p := range t.providers {
		if p.match != nil && p.match.matches(name, name) {
			return p
		}
	}
	return nil
}

func (t *Table) find(providerName, id string) *model {
	p := t.provider(providerName)
	if p == nil {
		return nil
	}
	if m := t.inProvider(p, id, false); m != nil {
		return m
	}
	if p.upstream == "" {
		return nil
	}
	rest := id
	for range 2 {
		j := strings.Index(rest, p.upstream)
		if j <= 0 {
			return nil
		}
		vendor, after := rest[:j], rest[j+len(p.upstream):]
		if v := t.provider(strings.ToLower(vendor)); v != nil && v != p {
			// A model that is free on the upstream's own API (Google's
			// Gemma, say) is not free through a router: skip such entries.
			return t.inProvider(v, after, true)
		}
		rest = after
	}
	return nil
}

// inProvider tries the spellings of id against p's models, then against
// its fallbacks' models; skipFree ignores entries priced at $0.
func (t *Table) inProvider(p *provider, id string, skipFree bool) *model {
	levels := candidates(id)
	if j := strings.IndexByte(id, '/'); j > 0 && t.provider(strings.ToLower(id[:j])) == p {
		levels = append(levels, candidates(id[j+1:])...)
	}
	try := func(q *provider, spellings, lowers []string) *model {
		for _, m := range q.models {
			if skipFree && m.free() {
				continue
			}
			for i, c := range spellings {
				if m.matches(c, lowers[i]) {
					return m
				}
			}
		}
		return nil
	}
	for _, spellings := range levels {
		lowers := make([]string, len(spellings))
		for i, c := range spellings {
			lowers[i] = strings.ToLower(c)
		}
		if m := try(p, spellings, lowers); m != nil {
			return m
		}
		for _, f := range p.fallback {
			if fp := t.byID[f]; fp != nil {
				if m := try(fp, spellings, lowers); m != nil {
					return m
				}
			}
		}
	}
	return nil
}

// fileJSON and the types below are the file format (see the package
// documentation); pointers tell a missing field from a zero.
type fileJSON struct {
	Source    string         `json:"source"`
	License   string         `json:"license"`
	Retrieved string         `json:"retrieved"`
	Unit      string         `json:"unit"`
	Notes     string         `json:"notes"`
	Providers []providerJSON `json:"providers"`
	Models    []modelJSON    `json:"models"`
}

type providerJSON struct {
	Provider string          `json:"provider"`
	Match    json.RawMessage `json:"match"`
	Fallback []string        `json:"fallback"`
	Upstream string          `json:"upstream"`
}

type ratesJSON struct {
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	CacheRead  *float64 `json:"cache_read"`
	CacheWrite *float64 `json:"cache_write"`
	// CacheWrite1h defaults to the rate set's cache_write (SPEC.md §7.4).
	CacheWrite1h *float64 `json:"cache_write_1h"`
}

type tierJSON struct {
	AboveInputTokens *int64 `json:"above_input_tokens"`
	ratesJSON
}

type variantJSON struct {
	FromDate    string `json:"from_date"`
	UTCTimeFrom string `json:"utc_time_from"`
	UTCTimeTo   string `json:"utc_time_to"`
	ratesJSON
	Tiers []tierJSON `json:"tiers"`
}

type modelJSON struct {
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Match    json.RawMessage `json:"match"`
	ratesJSON
	Tiers    []tierJSON    `json:"tiers"`
	Variants []variantJSON `json:"variants"`
}

// Parse reads a price table in the bundled format (see the package
// documentation; USD per million tokens, SPEC.md §4). Unknown fields,
// negative prices, a missing source or retrieved date, and a unit other than
// "USD per million tokens" are errors that say where they are.
func Parse(data []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(data, dec, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("unexpected data after the top-level object")
	}
	t := &Table{
		Source: strings.TrimSpace(f.Source), License: strings.TrimSpace(f.License),
		Retrieved: strings.TrimSpace(f.Retrieved), Unit: strings.TrimSpace(f.Unit), Notes: f.Notes,
		byID: map[string]*provider{}, cache: map[cacheKey]*model{},
	}
	if t.Source == "" {
		return nil, errors.New(`missing "source" (where the prices come from)`)
	}
	if t.Retrieved == "" {
		return nil, errors.New(`missing "retrieved" (YYYY-MM-DD)`)
	}
	day, err := time.Parse("2006-01-02", t.Retrieved)
	if err != nil {
		return nil, fmt.Errorf(`"retrieved" %q is not a YYYY-MM-DD date`, t.Retrieved)
	}
	t.ref = day.Add(12 * time.Hour)
	if t.Unit != Unit {
		if t.Unit == "" {
			return nil, fmt.Errorf(`missing "unit" (must be %q)`, Unit)
		}
		return nil, fmt.Errorf(`"unit" is %q, must be %q`, t.Unit, Unit)
	}
	for i, pj := range f.Providers {
		path := fmt.Sprintf("providers[%d]", i)
		id := strings.ToLower(strings.TrimSpace(pj.Provider))
		if id == "" {
			return nil, fmt.Errorf(`%s: missing "provider"`, path)
		}
		path += " (" + id + ")"
		if t.byID[id] != nil {
			return nil, fmt.Errorf("%s: provider listed twice", path)
		}
		p := &provider{id: id, upstream: pj.Upstream}
		if len(pj.Match) > 0 {
			if p.match, err = parseMatcher(pj.Match, path+".match"); err != nil {
				return nil, err
			}
		}
		for _, fb := range pj.Fallback {
			p.fallback = append(p.fallback, strings.ToLower(strings.TrimSpace(fb)))
		}
		t.byID[id] = p
		t.providers = append(t.providers, p)
	}
	seen := map[cacheKey]bool{}
	for i, mj := range f.Models {
		path := fmt.Sprintf("models[%d]", i)
		pid := strings.ToLower(strings.TrimSpace(mj.Provider))
		mid := strings.TrimSpace(mj.Model)
		if pid == "" {
			return nil, fmt.Errorf(`%s: missing "provider"`, path)
		}
		if mid == "" {
			return nil, fmt.Errorf(`%s: missing "model"`, path)
		}
		path += " (" + pid + " " + mid + ")"
		k := cacheKey{pid, strings.ToLower(mid)}
		if seen[k] {
			return nil, fmt.Errorf("%s: model listed twice for this provider", path)
		}
		seen[k] = true
		m := &model{provider: pid, id: mid}
		if len(mj.Match) > 0 {
			if m.match, err = parseMatcher(mj.Match, path+".match"); err != nil {
				return nil, err
			}
		}
		if m.base, err = parsePeriod(mj.ratesJSON, mj.Tiers, path); err != nil {
			return nil, err
		}
		for j, vj := range mj.Variants {
			vp := fmt.Sprintf("%s.variants[%d]", path, j)
			v, err := parseVariant(vj, vp)
			if err != nil {
				return nil, err
			}
			m.variants = append(m.variants, v)
		}
		p := t.byID[pid]
		if p == nil {
			p = &provider{id: pid}
			t.byID[pid] = p
			t.providers = append(t.providers, p)
		}
		p.models = append(p.models, m)
	}
	for _, p := range t.providers {
		for _, fb := range p.fallback {
			if t.byID[fb] == nil {
				return nil, fmt.Errorf("provider %s: fallback %q is not a provider of this table", p.id, fb)
			}
		}
	}
	return t, nil
}

func parseVariant(vj variantJSON, path string) (variant, error) {
	var v variant
	var err error
	if vj.FromDate == "" && vj.UTCTimeFrom == "" && vj.UTCTimeTo == "" {
		return v, fmt.Errorf(`%s: needs "from_date" or "utc_time_from"/"utc_time_to"`, path)
	}
	if vj.FromDate != "" {
		if v.from, err = time.Parse("2006-01-02", vj.FromDate); err != nil {
			return v, fmt.Errorf(`%s: "from_date" %q is not a YYYY-MM-DD date`, path, vj.FromDate)
		}
	}
	if vj.UTCTimeFrom != "" || vj.UTCTimeTo != "" {
		if vj.UTCTimeFrom == "" || vj.UTCTimeTo == "" {
			return v, fmt.Errorf(`%s: "utc_time_from" and "utc_time_to" go together`, path)
		}
		v.hasClock = true
		if v.clockFrom, err = clock(vj.UTCTimeFrom); err != nil {
			return v, fmt.Errorf(`%s: "utc_time_from": %v`, path, err)
		}
		if v.clockTo, err = clock(vj.UTCTimeTo); err != nil {
			return v, fmt.Errorf(`%s: "utc_time_to": %v`, path, err)
		}
	}
	v.period, err = parsePeriod(vj.ratesJSON, vj.Tiers, path)
	return v, err
}

// clock parses "HH:MM" or "HH:MM:SS" into seconds after midnight.
func clock(s string) (int, error) {
	for _, layout := range []string{"15:04:05", "15:04"} {
		if c, err := time.Parse(layout, s); err == nil {
			return c.Hour()*3600 + c.Minute()*60 + c.Second(), nil
		}
	}
	return 0, fmt.Errorf("%q is not HH:MM[:SS]", s)
}

func parsePeriod(rj ratesJSON, tiers []tierJSON, path string) (period, error) {
	var p period
	var err error
	if p.rates, err = parseRates(rj, path); err != nil {
		return p, err
	}
	for i, tj := range tiers {
		tp := fmt.Sprintf("%s.tiers[%d]", path, i)
		if tj.AboveInputTokens == nil {
			return p, fmt.Errorf(`%s: missing "above_input_tokens"`, tp)
		}
		if *tj.AboveInputTokens < 0 {
			return p, fmt.Errorf(`%s: negative "above_input_tokens" %d`, tp, *tj.AboveInputTokens)
		}
		r, err := parseRates(tj.ratesJSON, tp)
		if err != nil {
			return p, err
		}
		p.tiers = append(p.tiers, Tier{AboveInputTokens: *tj.AboveInputTokens, Rates: r})
	}
	sort.SliceStable(p.tiers, func(i, j int) bool { return p.tiers[i].AboveInputTokens < p.tiers[j].AboveInputTokens })
	for i := 1; i < len(p.tiers); i++ {
		if p.tiers[i].AboveInputTokens == p.tiers[i-1].AboveInputTokens {
			return p, fmt.Errorf("%s.tiers: two tiers above %d input tokens", path, p.tiers[i].AboveInputTokens)
		}
	}
	return p, nil
}

func parseRates(rj ratesJSON, path string) (Rates, error) {
	get := func(name string, v *float64) (float64, error) {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			return 0, fmt.Errorf("%s: %q is not a finite number", path, name)
		}
		if *v < 0 {
			return 0, fmt.Errorf("%s: negative %q price %v", path, name, *v)
		}
		return *v, nil
	}
	if rj.Input == nil {
		return Rates{}, fmt.Errorf(`%s: missing "input" price`, path)
	}
	if rj.Output == nil {
		return Rates{}, fmt.Errorf(`%s: missing "output" price`, path)
	}
	var r Rates
	var err error
	if r.Input, err = get("input", rj.Input); err != nil {
		return r, err
	}
	if r.Output, err = get("output", rj.Output); err != nil {
		return r, err
	}
	r.CacheRead, r.CacheWrite = r.Input, r.Input
	if rj.CacheRead != nil {
		if r.CacheRead, err = get("cache_read", rj.CacheRead); err != nil {
			return r, err
		}
	}
	if rj.CacheWrite != nil {
		if r.CacheWrite, err = get("cache_write", rj.CacheWrite); err != nil {
			return r, err
		}
	}
	r.CacheWrite1h = r.CacheWrite
	if rj.CacheWrite1h != nil {
		if r.CacheWrite1h, err = get("cache_write_1h", rj.CacheWrite1h); err != nil {
			return r, err
		}
	}
	return r, nil
}

// jsonError rewords encoding/json errors so that they say what is wrong and
// where (line and column), and name an unknown field.
func jsonError(data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		return fmt.Errorf("line %d, column %d: field %q must be %s, not %s", line, col, te.Field, te.Type, te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		line, col := position(data, dec.InputOffset())
		return fmt.Errorf("unknown field %s (near line %d, column %d)", strings.TrimPrefix(err.Error(), "json: unknown field "), line, col)
	case errors.Is(err, io.EOF):
		return errors.New("empty file: expected a JSON object")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
