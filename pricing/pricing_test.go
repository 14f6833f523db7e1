package pricing

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// DefaultSource reads only the header of the bundled table; it must agree
// with the full parse (a changed table must change the status line's key).
func TestDefaultSourceMatchesParse(t *testing.T) {
	src, day := DefaultSource()
	if d := Default(); src != d.Source || day != d.Retrieved {
		t.Errorf("DefaultSource() = %q, %q; Default() has %q, %q", src, day, d.Source, d.Retrieved)
	}
}

func TestDefaultMetadata(t *testing.T) {
	d := Default()
	if d != Default() {
		t.Fatal("Default() must return the same parsed table")
	}
	if !strings.Contains(d.Source, "@pydantic/genai-prices@0.1.8") || !strings.Contains(d.Source, "https://github.com/pydantic/genai-prices") {
		t.Errorf("Source = %q", d.Source)
	}
	if !strings.HasPrefix(d.License, "MIT") {
		t.Errorf("License = %q", d.License)
	}
	if d.Retrieved != "2026-11-29" {
		t.Errorf("Retrieved = %q", d.Retrieved)
	}
	if d.Unit != Unit {
		t.Errorf("Unit = %q", d.Unit)
	}
	if n := len(d.Prices()); n < 1000 {
		t.Errorf("only %d prices", n)
	}
	providers := map[string]bool{}
	for _, p := range d.Prices() {
		providers[p.Provider] = true
	}
	for _, want := range []string{"anthropic", "openai", "google", "x-ai", "deepseek", "moonshotai", "mistral", "groq", "openrouter", "aws", "azure", "cerebras", "zai", "fireworks", "together"} {
		if !providers[want] {
			t.Errorf("no prices for provider %s", want)
		}
	}
}

// TestLookupKnownPrices checks that the spellings the agents use resolve, and
// to the dataset's prices (USD per million tokens, @pydantic/genai-prices
// 0.1.8, at the table's reference instant 2026-11-29 12:00 UTC).
func TestLookupKnownPrices(t *testing.T) {
	tests := []struct {
		provider, model string
		wantProvider    string // entry that should match
		wantModel       string
		in, out, cr, cw float64
	}{
		{"anthropic", "claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
		{"anthropic", "claude-sonnet-4-5-20250929", "anthropic", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
		{"anthropic", "claude-sonnet-4.5", "anthropic", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
		{"Anthropic", "Claude-Sonnet-4.5-20250929", "anthropic", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
		{"anthropic", "claude-opus-4-1", "anthropic", "claude-opus-4-1", 15, 75, 1.5, 18.75},
		{"anthropic", "claude-3-5-haiku-20241022", "anthropic", "claude-3-5-haiku-latest", 0.8, 4, 0.08, 1},
		{"anthropic", "claude-haiku-4-5", "anthropic", "claude-haiku-4-5", 1, 5, 0.1, 1.25},
		{"anthropic", "claude-sonnet-4-20250514", "anthropic", "claude-sonnet-4-0", 3, 15, 0.3, 3.75},
		// OpenAI bills no cache writes; the dataset has no cache-write price,
		// so cache writes (never reported by OpenAI) default to the input price.
		{"openai", "gpt-5", "openai", "gpt-5", 1.25, 10, 0.125, 1.25},
		{"openai", "gpt-5-2025-08-07", "openai", "gpt-5", 1.25, 10, 0.125, 1.25},
		{"openai", "gpt-5-codex", "openai", "gpt-5", 1.25, 10, 0.125, 1.25},
		{"openai", "gpt-4o", "openai", "gpt-4o", 2.5, 10, 1.25, 2.5},
		{"openai", "gpt-4o-2024-05-13", "openai", "gpt-4o-2024-05-13", 5, 15, 5, 5},
		{"openai", "gpt-4.1-mini", "openai", "gpt-4.1-mini", 0.4, 1.6, 0.1, 0.4},
		{"openai", "o3", "openai", "o3", 2, 8, 0.5, 2},
		{"openai", "gpt-5-1-codex", "openai", "gpt-5.1", 1.25, 10, 0.125, 1.25},
		{"openai-codex", "gpt-5.1-codex-max", "openai", "gpt-5.1", 1.25, 10, 0.125, 1.25},
		{"azure-openai-responses", "gpt-5", "openai", "gpt-5", 1.25, 10, 0.125, 1.25},
		{"google", "gemini-2.5-pro", "google", "gemini-2.5-pro", 1.25, 10, 0.125, 1.25},
		{"google", "gemini-2.5-flash", "google", "gemini-2.5-flash", 0.3, 2.5, 0.03, 0.3},
		{"google", "models/gemini-2.5-flash", "google", "gemini-2.5-flash", 0.3, 2.5, 0.03, 0.3},
		{"google-vertex", "gemini-2.5-pro", "google", "gemini-2.5-pro", 1.25, 10, 0.125, 1.25},
		{"google-vertex", "gemini-2.5-flash", "google", "gemini-2.5-flash", 0.3, 2.5, 0.03, 0.3},
		{"google-vertex", "claude-sonnet-4-5@20250929", "google", "claude-sonnet-4-5", 3, 15, 0.3, 3.75},
		{"google-gemini-cli", "gemini-2.5-pro", "google", "gemini-2.5-pro", 1.25, 10, 0.125, 1.25},
		{"xai", "grok-4", "x-ai", "grok-4-0709", 3, 15, 0.75, 3},
		{"xai", "grok-code-fast-1", "x-ai", "grok-code-fast-1", 0.2, 1.5, 0.02, 0.2},
		{"deepseek", "deepseek-chat", "deepseek", "deepseek-chat", 0.27, 1.1, 0.07, 0.27},
		{"moonshotai", "kimi-k2-0905-preview", "moonshotai", "kimi-k2-0905-preview", 0.6, 2.5, 0.15, 0.6},
		{"moonshot", "kimi-k2-0905-preview", "moonshotai", "kimi-k2-0905-preview", 0.6, 2.5, 0.15, 0.6},
		{"moonshotai-cn", "kimi-k2-thinking", "moonshotai", "kimi-k2-thinking", 0.6, 2.5, 0.15, 0.6},
		{"mistral", "mistral-large-latest", "mistral", "mistral-large", 2, 6, 2, 2},
		{"groq", "openai/gpt-oss-120b", "groq", "openai/gpt-oss-120b", 0.15, 0.6, 0.075, 0.15},
		{"groq", "llama-3.3-70b-versatile", "groq", "llama-3.3-70b-versatile", 0.59, 0.79, 0.59, 0.59},
		{"openrouter", "anthropic/claude-sonnet-4.5", "openrouter", "anthropic/claude-sonnet-4.5", 3, 15, 0.3, 3.75},
		{"openrouter", "openai/gpt-5", "openrouter", "openai/gpt-5", 1.25, 10, 0.125, 1.25},
		// OpenRouter has no entry of its own: the upstream provider's price.
		{"openrouter", "x-ai/grok-4", "x-ai", "grok-4-0709", 3, 15, 0.75, 3},
		{"openrouter", "anthropic/claude-sonnet-4-0", "anthropic", "claude-sonnet-4-0", 3, 15, 0.3, 3.75},
		// Bedrock: the dataset's own Bedrock prices (regional endpoints cost
		// 10% more than global ones), else the upstream provider's.
		{"amazon-bedrock", "anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0", 3.3, 16.5, 0.33, 4.125},
		{"amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0", 3.3, 16.5, 0.33, 4.125},
		{"amazon-bedrock", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", 3, 15, 0.3, 3.75},
		{"amazon-bedrock", "us.anthropic.claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest", 0.8, 4, 0.08, 1},
		{"bedrock", "anthropic.claude-opus-4-1-20250805-v1:0", "aws", "regional.anthropic.claude-opus-4-1-20250805-v1:0", 15, 75, 1.5, 18.75},
		{"cerebras", "gpt-oss-120b", "cerebras", "gpt-oss-120b", 0.35, 0.75, 0.35, 0.35},
		{"zai", "glm-5.2", "zai", "GLM-5.2", 1.4, 4.4, 0.26, 1.4},
		{"minimax-cn", "MiniMax-M2.7", "minimax", "MiniMax-M2.7", 0.3, 1.2, 0.06, 0.375},
		{"fireworks", "accounts/fireworks/models/kimi-k2p5", "fireworks", "kimi-k2p5", 0.6, 3, 0.1, 0.6},
	}
	d := Default()
	for _, tc := range tests {
		t.Run(tc.provider+"/"+tc.model, func(t *testing.T) {
			p, ok := d.Lookup(tc.provider, tc.model)
			if !ok {
				t.Fatal("not priced")
			}
			if p.Provider != tc.wantProvider || p.Model != tc.wantModel {
				t.Errorf("matched %s/%s, want %s/%s", p.Provider, p.Model, tc.wantProvider, tc.wantModel)
			}
			want := Rates{tc.in, tc.out, tc.cr, tc.cw, p.Rates.CacheWrite1h} // TestCacheWrite1h checks the 1-hour rate
			if p.Rates != want {
				t.Errorf("rates %+v, want %+v", p.Rates, want)
			}
		})
	}
}

func TestLookupTiers(t *testing.T) {
	d := Default()
	for _, tc := range []struct {
		provider, model string
		want            []Tier
	}{
		{"anthropic", "claude-sonnet-4-5", []Tier{{200000, Rates{6, 22.5, 0.6, 7.5, 12}}}},
		{"openrouter", "anthropic/claude-sonnet-4.5", []Tier{{200000, Rates{6, 22.5, 0.6, 7.5, 12}}}},
		{"google", "gemini-2.5-pro", []Tier{{200000, Rates{2.5, 15, 0.25, 2.5, 2.5}}}},
		{"openai", "gpt-5", nil},
	} {
		p, ok := d.Lookup(tc.provider, tc.model)
		if !ok {
			t.Fatalf("%s/%s not priced", tc.provider, tc.model)
		}
		if fmt.Sprint(p.Tiers) != fmt.Sprint(tc.want) {
			t.Errorf("%s/%s tiers %v, want %v", tc.provider, tc.model, p.Tiers, tc.want)
		}
	}
}

func TestLookupUnpriced(t *testing.T) {
	d := Default()
	for _, tc := range [][2]string{
		{"local", "llama-custom"},
		{"anthropic", ""},
		{"anthropic", "   "},
		{"", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-9"},
		{"anthropic", "llama-custom"},
		{"openai", "claude-sonnet-4-5"}, // a provider without this model: no cross-provider guess
		{"local", "claude-sonnet-4-5"},  // an unknown provider: no guess from the model name
		{"mistral", "devstral-medium-latest"},
		{"openrouter", "someone/unknown-model"},
		{"amazon-bedrock", "us.unknown.model-v1:0"},
	} {
		if p, ok := d.Lookup(tc[0], tc[1]); ok {
			t.Errorf("Lookup(%q, %q) = %s/%s, want unpriced", tc[0], tc[1], p.Provider, p.Model)
		}
	}
}

func TestLookupAtDatedAndTimeOfDayPrices(t *testing.T) {
	d := Default()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		provider, model, at string
		in, out             float64
		tiers               int
	}{
		// o3's price cut on 2025-06-10.
		{"openai", "o3", "2025-06-09T23:59:59Z", 10, 40, 0},
		{"openai", "o3", "2025-06-10T00:00:00Z", 2, 8, 0},
		// DeepSeek: standard price 00:30–16:30 UTC, off-peak otherwise.
		{"deepseek", "deepseek-chat", "2025-09-01T12:00:00Z", 0.27, 1.1, 0},
		{"deepseek", "deepseek-chat", "2025-09-01T20:00:00Z", 0.135, 0.55, 0},
		{"deepseek", "deepseek-chat", "2025-09-01T00:15:00Z", 0.135, 0.55, 0},
		{"deepseek", "deepseek-chat", "2025-09-01T00:30:00Z", 0.27, 1.1, 0},
		// Opus 4.6 lost its >200k tier on 2026-03-13.
		{"anthropic", "claude-opus-4-6", "2026-03-12T10:00:00Z", 5, 25, 1},
		{"anthropic", "claude-opus-4-6", "2026-03-13T10:00:00Z", 5, 25, 0},
	} {
		p, ok := d.LookupAt(tc.provider, tc.model, at(tc.at))
		if !ok {
			t.Fatalf("%s/%s not priced", tc.provider, tc.model)
		}
		if p.Input != tc.in || p.Output != tc.out || len(p.Tiers) != tc.tiers {
			t.Errorf("%s/%s at %s: %v %v, want input %v output %v with %d tiers", tc.provider, tc.model, tc.at, p.Rates, p.Tiers, tc.in, tc.out, tc.tiers)
		}
	}
	// A zero instant means the reference instant, as for Lookup.
	a, _ := d.LookupAt("openai", "o3", time.Time{})
	b, _ := d.Lookup("openai", "o3")
	if a.Rates != b.Rates {
		t.Errorf("LookupAt(zero) %v != Lookup %v", a.Rates, b.Rates)
	}
}

func TestCost(t *testing.T) {
	p, ok := Default().Lookup("anthropic", "claude-sonnet-4-5")
	if !ok {
		t.Fatal("claude-sonnet-4-5 not priced")
	}
	c := p.Cost(Tokens{Input: 120, Output: 25, CacheRead: 10})
	if !near(c.Total, 0.000738) {
		t.Errorf("Total = %.15f, want 0.000738", c.Total)
	}
	if !near(c.Input, 0.00036) || !near(c.Output, 0.000375) || !near(c.CacheRead, 0.000003) || c.CacheWrite != 0 {
		t.Errorf("parts = %+v", c)
	}
	if !near(c.Total, c.Input+c.Output+c.CacheRead+c.CacheWrite) {
		t.Errorf("Total %v is not the sum of the parts %+v", c.Total, c)
	}
	if z := p.Cost(Tokens{Input: -5, Output: -1}); z != (Cost{}) {
		t.Errorf("negative counts cost %+v, want 0", z)
	}
}

func TestCostTierRule(t *testing.T) {
	p, _ := Default().Lookup("anthropic", "claude-sonnet-4-5")
	for _, tc := range []struct {
		u    Tokens
		rate float64 // input rate used
	}{
		{Tokens{Input: 200000}, 3}, // exactly 200k: not above
		{Tokens{Input: 200001}, 6}, // above
		{Tokens{Input: 1000, CacheRead: 199000}, 3},
		{Tokens{Input: 1000, CacheRead: 199000, CacheWrite: 1}, 6}, // cache tokens count towards the prompt
		{Tokens{Input: 10, Output: 500000}, 3},                     // output does not
	} {
		c := p.Cost(tc.u)
		if !near(c.Input, float64(tc.u.Input)*tc.rate/1e6) {
			t.Errorf("%+v: input cost %v, want rate %v", tc.u, c.Input, tc.rate)
		}
	}
	c := p.Cost(Tokens{Input: 100000, Output: 1000, CacheRead: 100000, CacheWrite: 1000})
	want := (100000*6 + 1000*22.5 + 100000*0.6 + 1000*7.5) / 1e6
	if !near(c.Total, want) {
		t.Errorf("long-context total %v, want %v", c.Total, want)
	}
	// Tiers given out of order still pick the highest one below the prompt.
	q := Price{Rates: Rates{Input: 1}, Tiers: []Tier{{300, Rates{Input: 3}}, {100, Rates{Input: 2}}}}
	for prompt, want := range map[int64]float64{100: 1, 101: 2, 300: 2, 301: 3} {
		if got := q.RatesFor(prompt).Input; got != want {
			t.Errorf("RatesFor(%d) input %v, want %v", prompt, got, want)
		}
	}
}

const minimal = `{"source": "test", "retrieved": "2026-01-02", "unit": "USD per million tokens", "models": [%s]}`

func TestParseValidation(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"unknown top-level field", `{"source": "s", "retrieved": "2026-01-02", "unit": "USD per million tokens", "modles": []}`, `unknown field "modles"`},
		{"unknown model field", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "cache_reed": 3}`), `unknown field "cache_reed"`},
		{"unknown tier field", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "tiers": [{"above": 5, "input": 1, "output": 1}]}`), `unknown field "above"`},
		{"unknown provider field", `{"source": "s", "retrieved": "2026-01-02", "unit": "USD per million tokens", "providers": [{"provider": "p", "alias": "x"}]}`, `unknown field "alias"`},
		{"negative input", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": -1, "output": 2}`), `models[0] (p m): negative "input" price -1`},
		{"negative cache_write", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "cache_write": -0.5}`), `negative "cache_write" price`},
		{"negative tier price", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "tiers": [{"above_input_tokens": 5, "input": 1, "output": -2}]}`), `tiers[0]: negative "output" price`},
		{"negative variant price", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "variants": [{"from_date": "2026-01-01", "input": -1, "output": 2}]}`), `variants[0]: negative "input" price`},
		{"missing source", `{"retrieved": "2026-01-02", "unit": "USD per million tokens", "models": []}`, `missing "source"`},
		{"missing retrieved", `{"source": "s", "unit": "USD per million tokens", "models": []}`, `missing "retrieved"`},
		{"bad retrieved", `{"source": "s", "retrieved": "yesterday", "unit": "USD per million tokens"}`, `"retrieved" "yesterday" is not a YYYY-MM-DD date`},
		{"missing unit", `{"source": "s", "retrieved": "2026-01-02"}`, `missing "unit"`},
		{"wrong unit", `{"source": "s", "retrieved": "2026-01-02", "unit": "USD per 1K tokens"}`, `"unit" is "USD per 1K tokens"`},
		{"missing output", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1}`), `missing "output" price`},
		{"missing model", fmt.Sprintf(minimal, `{"provider": "p", "input": 1, "output": 1}`), `models[0]: missing "model"`},
		{"wrong type", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": "1", "output": 1}`), `must be float64, not string`},
		{"bad match key", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "match": {"prefix": "m"}, "input": 1, "output": 1}`), `unknown match key "prefix"`},
		{"two match keys", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "match": {"equals": "m", "contains": "m"}, "input": 1, "output": 1}`), `exactly one key`},
		{"bad regex", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "match": {"regex": "^(?!x)"}, "input": 1, "output": 1}`), `models[0] (p m).match.regex`},
		{"duplicate model", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 1}, {"provider": "P", "model": "M", "input": 1, "output": 1}`), `models[1] (p M): model listed twice`},
		{"duplicate tier", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "tiers": [{"above_input_tokens": 5, "input": 1, "output": 1}, {"above_input_tokens": 5, "input": 2, "output": 2}]}`), `two tiers above 5`},
		{"variant without condition", fmt.Sprintf(minimal, `{"provider": "p", "model": "m", "input": 1, "output": 2, "variants": [{"input": 1, "output": 1}]}`), `needs "from_date"`},
		{"unknown fallback", `{"source": "s", "retrieved": "2026-01-02", "unit": "USD per million tokens", "providers": [{"provider": "p", "fallback": ["nope"]}]}`, `fallback "nope"`},
		{"syntax error", "{\n\"source\": \"s\",\n}", `invalid JSON at line 3`},
		{"trailing data", `{"source": "s", "retrieved": "2026-01-02", "unit": "USD per million tokens"} {}`, `after the top-level object`},
		{"empty", ``, `empty file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.data))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseDefaultsAndOrder(t *testing.T) {
	tab, err := Parse([]byte(fmt.Sprintf(minimal, `
		{"provider": "p", "model": "m", "input": 2, "output": 8,
		 "tiers": [{"above_input_tokens": 1000, "input": 4, "output": 16}, {"above_input_tokens": 10, "input": 3, "output": 12, "cache_read": 0.3}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := tab.Lookup("P", "M")
	if !ok {
		t.Fatal("not found")
	}
	// Omitted cache prices are the same rate set's input price.
	if p.Rates != (Rates{2, 8, 2, 2, 2}) {
		t.Errorf("rates %+v", p.Rates)
	}
	want := []Tier{{10, Rates{3, 12, 0.3, 3, 3}}, {1000, Rates{4, 16, 4, 4, 4}}}
	if fmt.Sprint(p.Tiers) != fmt.Sprint(want) {
		t.Errorf("tiers %v, want %v (sorted, defaults filled)", p.Tiers, want)
	}
	// The returned tiers are a copy.
	p.Tiers[0].Input = 99
	if q, _ := tab.Lookup("p", "m"); q.Tiers[0].Input != 3 {
		t.Error("Lookup returned shared tiers")
	}
}

// TestLookupRules exercises the matching rules on a small table.
func TestLookupRules(t *testing.T) {
	tab, err := Parse([]byte(`{
	  "source": "test", "retrieved": "2026-01-02", "unit": "USD per million tokens",
	  "providers": [
	    {"provider": "router", "upstream": "/"},
	    {"provider": "cloud", "match": {"or": [{"contains": "cloud"}, {"equals": "cl"}]}, "fallback": ["vendor"], "upstream": "."},
	    {"provider": "vendor", "match": {"starts_with": "vend"}, "fallback": ["other"]},
	    {"provider": "other"}
	  ],
	  "models": [
	    {"provider": "vendor", "model": "alpha-4-5", "match": {"or": [{"starts_with": "alpha-4-5"}]}, "input": 1, "output": 2},
	    {"provider": "vendor", "model": "alpha", "match": {"starts_with": "alpha"}, "input": 9, "output": 9},
	    {"provider": "vendor", "model": "beta-2.1", "input": 3, "output": 4},
	    {"provider": "vendor", "model": "gamma", "match": {"and": [{"starts_with": "gamma"}, {"not": {"regex": "^.*-tts$"}}]}, "input": 5, "output": 6},
	    {"provider": "vendor", "model": "freebie", "input": 0, "output": 0},
	    {"provider": "vendor", "model": "delta", "input": 7, "output": 8},
	    {"provider": "router", "model": "vendor/special", "input": 10, "output": 10},
	    {"provider": "cloud", "model": "cloud-own", "input": 11, "output": 11},
	    {"provider": "other", "model": "deep", "input": 12, "output": 12}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		provider, model, want string // want "" = unpriced; else "provider/model"
	}{
		{"vendor", "alpha-4-5", "vendor/alpha-4-5"},
		{"VENDOR", "ALPHA-4-5-20250101", "vendor/alpha-4-5"}, // case, first match wins
		{"vendor", "alpha-4.5", "vendor/alpha-4-5"},          // dot/dash
		{"vendor", "alpha-9", "vendor/alpha"},
		{"vendor", "beta-2-1", "vendor/beta-2.1"},
		{"vendor", "beta-2.1-20251231", "vendor/beta-2.1"},
		{"vendor", "beta-2-1-2025-12-31", "vendor/beta-2.1"},
		{"vendor", "beta-2.1@20251231", "vendor/beta-2.1"},
		{"vendor", "beta-2.1-latest", "vendor/beta-2.1"},
		{"vendor", "models/beta-2.1", "vendor/beta-2.1"},
		{"vendor", "vendor/beta-2.1", "vendor/beta-2.1"},  // the provider's own prefix
		{"vendor", "beta-2.1-20251399", ""},               // not a date: nothing stripped
		{"vendor", "beta-2.10", ""},                       // 2.10 is not 2.1
		{"vendor", "beta-21", ""},                         // no separator is invented
		{"vendor", "gamma-pro", "vendor/gamma"},           // and/not/regex
		{"vendor", "gamma-pro-tts", ""},                   // excluded by "not"
		{"vendor", "deep", "other/deep"},                  // fallback, one level
		{"cloud", "deep", ""},                             // fallbacks are not transitive
		{"vendor-eu", "delta", "vendor/delta"},            // provider alias
		{"my-cloud", "delta", "vendor/delta"},             // alias + fallback
		{"cl", "cloud-own", "cloud/cloud-own"},            // alias by equals
		{"cloud", "us.vendor.delta-v1:0", "vendor/delta"}, // region + vendor + version suffix
		{"cloud", "vendor.delta", "vendor/delta"},         // found through the fallback already
		{"router", "vendor/special", "router/vendor/special"},
		{"router", "vendor/delta", "vendor/delta"},         // upstream
		{"router", "vendor/alpha-4.5", "vendor/alpha-4-5"}, // upstream with dot/dash
		{"router", "vendor/freebie", ""},                   // free upstream is not free through a router
		{"vendor", "freebie", "vendor/freebie"},            // but is priced (at $0) on its own provider
		{"router", "nobody/delta", ""},
		{"router", "delta", ""},
		{"nobody", "delta", ""},
	} {
		p, ok := tab.Lookup(tc.provider, tc.model)
		got := ""
		if ok {
			got = p.Provider + "/" + p.Model
		}
		if got != tc.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", tc.provider, tc.model, got, tc.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	got := candidates("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	want := [][]string{
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4.5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-2025-09-29-v1:0"},
		{"us.anthropic.claude-sonnet-4-5-20250929", "us.anthropic.claude-sonnet-4.5-20250929"},
		{"us.anthropic.claude-sonnet-4-5", "us.anthropic.claude-sonnet-4.5"},
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
	got = candidates("models/gemini-2.5-pro-latest")
	want = [][]string{
		{"models/gemini-2.5-pro-latest", "models/gemini-2-5-pro-latest"},
		{"gemini-2.5-pro-latest", "gemini-2-5-pro-latest"},
		{"gemini-2.5-pro", "gemini-2-5-pro"},
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("candidates:\n got %q\nwant %q", got, want)
	}
	for _, s := range []string{"gpt-4o-2024-08-06", "kimi-k2-0905-preview", "mistral-large-2411", "qwen3-235b-a22b-2507"} {
		if alt := dashToDot(s); alt != "" {
			t.Errorf("dashToDot(%q) = %q, want no change", s, alt)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(good, []byte(fmt.Sprintf(minimal, `{"provider": "local", "model": "llama-custom", "input": 0.5, "output": 1}`)), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Source != "test" || tab.Retrieved != "2026-01-02" {
		t.Errorf("metadata %q %q", tab.Source, tab.Retrieved)
	}
	if p, ok := tab.Lookup("local", "llama-custom"); !ok || p.Input != 0.5 {
		t.Errorf("Lookup = %+v %v", p, ok)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(fmt.Sprintf(minimal, `{"provider": "local", "model": "x", "input": -1, "output": 1}`)), 0o644)
	_, err = Load(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `negative "input" price`) {
		t.Errorf("Load(bad) error %v, want file name and reason", err)
	}
	missing := filepath.Join(dir, "missing.json")
	if _, err = Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) error %v, want file name", err)
	}
}

func TestMerge(t *testing.T) {
	over, err := Parse([]byte(fmt.Sprintf(minimal, `
		{"provider": "local", "model": "llama-custom", "input": 0.5, "output": 1},
		{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 1, "output": 1}`)))
	if err != nil {
		t.Fatal(err)
	}
	m := Default().Merge(over)
	if m.Source != "test" {
		t.Errorf("Source %q", m.Source)
	}
	if p, ok := m.Lookup("local", "llama-custom"); !ok || p.Input != 0.5 {
		t.Errorf("user model: %+v %v", p, ok)
	}
	if p, _ := m.Lookup("anthropic", "claude-sonnet-4-5"); p.Input != 1 {
		t.Errorf("user price does not take precedence: %+v", p)
	}
	if p, _ := m.Lookup("openrouter", "anthropic/claude-sonnet-4-0"); p.Input != 3 {
		t.Errorf("bundled price lost: %+v", p)
	}
	if p, _ := m.Lookup("openrouter", "anthropic/claude-sonnet-4-5"); p.Provider != "openrouter" {
		t.Errorf("openrouter's own entry should still win: %+v", p)
	}
	if p, _ := Default().Lookup("anthropic", "claude-sonnet-4-5"); p.Input != 3 {
		t.Error("Merge changed the default table")
	}
}

func TestConcurrentLookups(t *testing.T) {
	d := Default()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				model := fmt.Sprintf("claude-sonnet-4-5-2025%02d%02d", 1+(i+j)%12, 1+j%28)
				if _, ok := d.Lookup("anthropic", model); !ok {
					t.Errorf("%s not priced", model)
					return
				}
				d.Lookup("local", model)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkLookupCached(b *testing.B) {
	d := Default()
	for b.Loop() {
		d.Lookup("openrouter", "anthropic/claude-sonnet-4.5")
	}
}

// TestCacheWrite1h: 1-hour cache writes are priced at their own rate, the
// rest of the cache writes at the 5-minute rate (SPEC.md §7.4); the bundled
// table carries both for Claude models (c27: claude-haiku-4-5 $1.25 and $2).
func TestCacheWrite1h(t *testing.T) {
	p, ok := Default().Lookup("anthropic", "claude-haiku-4-5")
	if !ok {
		t.Fatal("no price for anthropic/claude-haiku-4-5")
	}
	if p.CacheWrite != 1.25 || p.CacheWrite1h != 2 {
		t.Fatalf("cache write rates %v / %v, want 1.25 / 2", p.CacheWrite, p.CacheWrite1h)
	}
	for _, c := range []struct {
		tok  Tokens
		want float64
	}{
		{Tokens{Input: 1000, Output: 200, CacheRead: 5000, CacheWrite: 3000, CacheWrite1h: 2000}, 0.00775}, // c27 27a00002
		{Tokens{Input: 400, Output: 100, CacheWrite: 1000, CacheWrite1h: 1000}, 0.0029},                    // 27a00004
		{Tokens{Input: 100, Output: 20, CacheWrite: 800}, 0.0012},                                          // 27a00006: all 5-minute
		{Tokens{Input: 200, Output: 50, CacheRead: 1000, CacheWrite: 2000, CacheWrite1h: 1500}, 0.004175},  // 27b00002 (omp cttl)
		{Tokens{CacheWrite: 100, CacheWrite1h: 900}, 0.0002},                                               // 1h part clamped to the writes
		{Tokens{CacheWrite: 100, CacheWrite1h: -5}, 0.000125},                                              // negative 1h part is 0
	} {
		if got := p.Cost(c.tok).Total; math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cost(%+v) = %v, want %v", c.tok, got, c.want)
		}
	}
	tb, err := Parse([]byte(`{"source":"t","retrieved":"2026-01-01","unit":"USD per million tokens",
		"models":[{"provider":"p","model":"a","input":1,"output":2,"cache_write":3},
		          {"provider":"p","model":"b","input":1,"output":2,"cache_write":3,"cache_write_1h":7}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tb.Lookup("p", "a")
	b, _ := tb.Lookup("p", "b")
	if a.CacheWrite1h != 3 || b.CacheWrite1h != 7 {
		t.Errorf("cache_write_1h %v (default: cache_write 3) and %v (given: 7)", a.CacheWrite1h, b.CacheWrite1h)
	}
	if _, err := Parse([]byte(`{"source":"t","retrieved":"2026-01-01","unit":"USD per million tokens",
		"models":[{"provider":"p","model":"a","input":1,"output":2,"cache_write_1h":-1}]}`)); err == nil {
		t.Error("a negative cache_write_1h was accepted")
	}
}

// TestModelSpellings: the usual spellings of one model find its price
// (SPEC.md §7.4 served model): dots or dashes in the version, a provider
// prefix, case, a snapshot date, a router's upstream/model id.
func TestModelSpellings(t *testing.T) {
	tb := Default()
	for _, c := range []struct{ provider, model, want string }{
		{"anthropic", "claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4.5", "anthropic/claude-sonnet-4-5"},
		{"anthropic", "anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"Anthropic", "Claude-Sonnet-4-5", "anthropic/claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"},
		{"openai", "openai/gpt-4o-mini", "openai/gpt-4o-mini"},
		{"google", "google/gemini-2.5-pro", "google/gemini-2.5-pro"},
	} {
		p, ok := tb.Lookup(c.provider, c.model)
		if !ok || p.Provider+"/"+p.Model != c.want {
			t.Errorf("Lookup(%q, %q) = %s/%s (%v), want %s", c.provider, c.model, p.Provider, p.Model, ok, c.want)
		}
	}
	for _, c := range []struct {
		model string
		in    float64
	}{{"anthropic/claude-haiku-4.5", 1}, {"openai/gpt-4o-mini", 0.15}} {
		p, ok := tb.Lookup("openrouter", c.model)
		if !ok || p.Input != c.in {
			t.Errorf("Lookup(openrouter, %q) = %+v (%v), want input %v", c.model, p, ok, c.in)
		}
	}
	if _, ok := tb.Lookup("openrouter", "openrouter/auto"); ok {
		t.Error("openrouter/auto (an alias, not a model) has a price")
	}
}
