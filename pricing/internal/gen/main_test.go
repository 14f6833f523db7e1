package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/pricing"
)

// dataset is a small extract in the shape of @pydantic/genai-prices' data.
const dataset = `[
 {"id": "anthropic", "provider_match": {"contains": "anthropic"}, "models": [
  {"id": "claude-sonnet-4-5", "match": {"or": [{"starts_with": "claude-sonnet-4-5"}, {"starts_with": "claude-sonnet-4.5"}]},
   "prices": {"input_mtok": {"base": 3, "tiers": [{"start": 200000, "price": 6}]},
              "cache_write_mtok": {"base": 3.75, "tiers": [{"start": 200000, "price": 7.5}]},
              "cache_read_mtok": 0.3,
              "output_mtok": {"base": 15, "tiers": [{"start": 500000, "price": 30}, {"start": 200000, "price": 22.5}]},
              "cache_write_1h_mtok": 6, "web_searches_kcount": 10}},
  {"id": "claude-opus-4-6", "match": {"starts_with": "claude-opus-4-6"},
   "prices": [{"prices": {"input_mtok": {"base": 5, "tiers": [{"start": 200000, "price": 10}]}, "output_mtok": 25}},
              {"constraint": {"start_date": "2026-03-13", "type": "start_date"}, "prices": {"input_mtok": 5, "output_mtok": 25}}]},
  {"id": "claude-embed", "match": {"equals": "claude-embed"}, "prices": {"input_mtok": 0.1}},
  {"id": "claude-haiku-4-5", "match": {"starts_with": "claude-haiku-4-5"},
   "prices": {"input_mtok": 1, "output_mtok": 5, "cache_read_mtok": 0.1, "cache_write_mtok": 1.25}}
 ]},
 {"id": "deepseek", "models": [
  {"id": "deepseek-chat", "match": {"starts_with": "deepseek-chat"},
   "prices": [{"prices": {"input_mtok": 0.135, "cache_read_mtok": 0.035, "output_mtok": 0.55}},
              {"constraint": {"start_time": "08:30:00+08:00", "end_time": "16:30:00Z", "type": "time_of_date"},
               "prices": {"input_mtok": 0.27, "cache_read_mtok": 0.07, "output_mtok": 1.1}}]}
 ]},
 {"id": "google", "provider_match": {"or": [{"contains": "google"}, {"contains": "vertex"}]}, "fallback_model_providers": ["anthropic", "not-kept"], "models": [
  {"id": "gemini-2.5-pro", "match": {"and": [{"starts_with": "gemini-2.5-pro"}, {"regex": "^(?!.*-[tT][tT][sS](?:$|-))"}]},
   "prices": {"input_mtok": 1.25, "output_mtok": 10}},
  {"id": "gemma-3", "match": {"starts_with": "gemma-3"}, "prices": {}}
 ]},
 {"id": "not-kept", "models": [{"id": "x", "match": {"equals": "x"}, "prices": {"input_mtok": 1, "output_mtok": 1}}]}
]`

func TestConvert(t *testing.T) {
	data, warnings, err := convert([]byte(dataset), []string{"deepseek", "google", "anthropic"},
		"test-source", "MIT", "2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"dropped anthropic/claude-embed", "fallback not-kept not kept"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	tab, err := pricing.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Source != "test-source" || tab.License != "MIT" || tab.Retrieved != "2026-11-29" {
		t.Errorf("metadata %q %q %q", tab.Source, tab.License, tab.Retrieved)
	}
	if n := len(tab.Prices()); n != 6 {
		t.Errorf("%d models, want 6", n)
	}
	// A Claude model without a 1-hour cache-write price gets Anthropic's
	// 2 × input (SPEC.md §7.4); the dataset's own is kept (sonnet: 6).
	if h, _ := tab.Lookup("anthropic", "claude-haiku-4-5"); h.CacheWrite != 1.25 || h.CacheWrite1h != 2 {
		t.Errorf("claude-haiku-4-5 cache writes %v / %v, want 1.25 / 2 (derived)", h.CacheWrite, h.CacheWrite1h)
	}

	// Per-key tiers merge into whole rate sets, one per threshold; the flat
	// cache-read price carries into every tier.
	p, ok := tab.Lookup("anthropic", "claude-sonnet-4.5-20250929")
	if !ok {
		t.Fatal("claude-sonnet-4-5 not priced")
	}
	if want := (pricing.Rates{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, CacheWrite1h: 6}); p.Rates != want {
		t.Errorf("base %+v, want %+v", p.Rates, want)
	}
	wantTiers := []pricing.Tier{
		{AboveInputTokens: 200000, Rates: pricing.Rates{Input: 6, Output: 22.5, CacheRead: 0.3, CacheWrite: 7.5, CacheWrite1h: 6}},
		{AboveInputTokens: 500000, Rates: pricing.Rates{Input: 6, Output: 30, CacheRead: 0.3, CacheWrite: 7.5, CacheWrite1h: 6}},
	}
	if fmt.Sprint(p.Tiers) != fmt.Sprint(wantTiers) {
		t.Errorf("tiers %v, want %v", p.Tiers, wantTiers)
	}

	// Dated prices: the tier disappears on 2026-03-13.
	before, _ := tab.LookupAt("anthropic", "claude-opus-4-6", time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC))
	after, _ := tab.LookupAt("anthropic", "claude-opus-4-6", time.Date(2026, 3, 13, 0, 0, 0, 0, time.UTC))
	if len(before.Tiers) != 1 || len(after.Tiers) != 0 {
		t.Errorf("opus tiers before %v after %v", before.Tiers, after.Tiers)
	}

	// Time of day, with the +08:00 start converted to 00:30 UTC.
	for hour, want := range map[int]float64{0: 0.135, 1: 0.27, 16: 0.27, 17: 0.135} {
		p, _ := tab.LookupAt("deepseek", "deepseek-chat", time.Date(2026, 1, 1, hour, 0, 0, 0, time.UTC))
		if p.Input != want {
			t.Errorf("deepseek at %02d:00 UTC: input %v, want %v", hour, p.Input, want)
		}
	}

	// The negative lookahead became a "not" rule.
	if _, ok := tab.Lookup("google", "gemini-2.5-pro-preview-06-05"); !ok {
		t.Error("gemini-2.5-pro preview not priced")
	}
	if _, ok := tab.Lookup("google", "gemini-2.5-pro-preview-tts"); ok {
		t.Error("gemini-2.5-pro TTS must not match gemini-2.5-pro")
	}
	// Google falls back to Anthropic (the dataset's fallback_model_providers).
	if p, ok := tab.Lookup("google-vertex", "claude-sonnet-4-5@20250929"); !ok || p.Provider != "anthropic" {
		t.Errorf("vertex claude: %+v %v", p, ok)
	}
	// {} is the dataset's free model: priced at $0, not dropped.
	if p, ok := tab.Lookup("google", "gemma-3-27b-it"); !ok || p.Rates != (pricing.Rates{}) {
		t.Errorf("gemma: %+v %v", p, ok)
	}
	if _, ok := tab.Lookup("not-kept", "x"); ok {
		t.Error("provider outside the keep list was written")
	}
}

func TestConvertErrors(t *testing.T) {
	if _, _, err := convert([]byte(dataset), []string{"nope"}, "s", "MIT", "2026-11-29"); err == nil || !strings.Contains(err.Error(), `"nope" not in dataset`) {
		t.Errorf("missing provider: %v", err)
	}
	bad := `[{"id": "a", "models": [{"id": "m", "match": {"regex": "(?<=x)y"}, "prices": {"input_mtok": 1, "output_mtok": 1}}]}]`
	if _, _, err := convert([]byte(bad), []string{"a"}, "s", "MIT", "2026-11-29"); err == nil || !strings.Contains(err.Error(), "does not compile in Go") {
		t.Errorf("bad regex: %v", err)
	}
}

func TestUTCClock(t *testing.T) {
	for in, want := range map[string]string{"00:30:00Z": "00:30:00", "08:30:00+08:00": "00:30:00", "23:00:00-02:00": "01:00:00", "16:30:00.5Z": "16:30:00"} {
		got, err := utcClock(in)
		if err != nil || got != want {
			t.Errorf("utcClock(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := utcClock("8:30"); err == nil {
		t.Error("utcClock(8:30) should fail")
	}
}
