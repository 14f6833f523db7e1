package synth

// modelInfo is one model the generator writes, with its list prices in
// thousandths of a US dollar per million tokens (so 3000 is $3/M): a token
// count times the rate, divided by 1000, is micro-dollars.
type modelInfo struct {
	provider, id, api string
	in, out, cr, cw   int64
	style             cacheStyle
	reasoning         bool // writes thinking blocks
}

type cacheStyle uint8

const (
	cacheAnthropic cacheStyle = iota // small input, cacheWrite for new tokens, cacheRead for the prefix
	cacheOpenAI                      // input = uncached part, cacheRead = cached prefix, no cacheWrite
	cacheImplicit                    // sometimes a cached prefix, never a cacheWrite
	cacheNone                        // everything is input
)

// Indexes into models.
const (
	mSonnet = iota
	mOpus
	mHaiku
	mGPT5
	mGPT5Codex
	mGemini
	mGrok
	mOpenRouter
	mLocal
)

// modelUnknown is the attribution of session_summary records (no model).
const modelUnknown = -1

var models = []modelInfo{
	mSonnet:     {"anthropic", "claude-sonnet-4-5", "anthropic-messages", 3000, 15000, 300, 3750, cacheAnthropic, true},
	mOpus:       {"anthropic", "claude-opus-4-1", "anthropic-messages", 15000, 75000, 1500, 18750, cacheAnthropic, true},
	mHaiku:      {"anthropic", "claude-haiku-4-5", "anthropic-messages", 1000, 5000, 100, 1250, cacheAnthropic, false},
	mGPT5:       {"openai", "gpt-5", "openai-responses", 1250, 10000, 125, 0, cacheOpenAI, true},
	mGPT5Codex:  {"openai", "gpt-5-codex", "openai-responses", 1250, 10000, 125, 0, cacheOpenAI, true},
	mGemini:     {"google", "gemini-2.5-pro", "google-generative-ai", 1250, 10000, 310, 0, cacheImplicit, true},
	mGrok:       {"xai", "grok-code-fast-1", "openai-completions", 200, 1500, 20, 0, cacheOpenAI, true},
	mOpenRouter: {"openrouter", "anthropic/claude-sonnet-4.5", "openai-completions", 3000, 15000, 300, 3750, cacheAnthropic, false},
	mLocal:      {"local", "llama-custom", "openai-completions", 0, 0, 0, 0, cacheNone, false},
}

// modelWeights is how often a session starts on each model (local is chosen
// by the plan, never at random).
var modelWeights = []int{40, 8, 8, 10, 8, 8, 6, 5, 0}

func modelKey(m int) string {
	if m < 0 || m >= len(models) {
		return "unknown/unknown"
	}
	return models[m].provider + "/" + models[m].id
}

// usageStyle is which fields a usage object carries.
type usageStyle uint8

const (
	styleFull       usageStyle = iota // input, output, cacheRead, cacheWrite, totalTokens, cost{…}
	styleV1                           // input, output, cacheRead, cacheWrite (v1: no total, no cost)
	styleSummary                      // input, output (session_summary)
	styleCostNumber                   // full, with cost as a plain number (pi-subagents' usage objects)
)

// usage is one usage object as written, with its cost in micro-dollars.
type usage struct {
	in, out, cr, cw int64
	cost            [4]int64 // micro-dollars: input, output, cacheRead, cacheWrite
	style           usageStyle
}

func (u usage) total() int64 { return u.in + u.out + u.cr + u.cw }

func (u usage) costTotal() int64 { return u.cost[0] + u.cost[1] + u.cost[2] + u.cost[3] }

// hasCost reports whether the usage object records a cost.
func (u usage) hasCost() bool { return u.style == styleFull || u.style == styleCostNumber }

// priced returns u with costs computed from model m's rates (rounded to the
// micro-dollar per component, so every value is a finite decimal).
func priced(m int, in, out, cr, cw int64) usage {
	u := usage{in: in, out: out, cr: cr, cw: cw}
	if m >= 0 && m < len(models) {
		mi := &models[m]
		u.cost = [4]int64{roundDiv(in*mi.in, 1000), roundDiv(out*mi.out, 1000), roundDiv(cr*mi.cr, 1000), roundDiv(cw*mi.cw, 1000)}
	}
	return u
}

func roundDiv(a, b int64) int64 { return (a + b/2) / b }

// add returns the componentwise sum (tokens and costs).
func (u usage) add(v usage) usage {
	r := usage{in: u.in + v.in, out: u.out + v.out, cr: u.cr + v.cr, cw: u.cw + v.cw, style: u.style}
	for i := range r.cost {
		r.cost[i] = u.cost[i] + v.cost[i]
	}
	return r
}

// appendUsage writes the usage object in the agents' key order.
func appendUsage(b []byte, u usage) []byte {
	b = append(b, '{')
	b = kvInt(b, "input", u.in)
	b = kvInt(b, "output", u.out)
	if u.style == styleSummary {
		return append(b, '}')
	}
	b = kvInt(b, "cacheRead", u.cr)
	b = kvInt(b, "cacheWrite", u.cw)
	if u.style == styleV1 {
		return append(b, '}')
	}
	b = kvInt(b, "totalTokens", u.total())
	if u.style == styleCostNumber {
		return append(appendMicros(key(b, "cost"), u.costTotal()), '}')
	}
	b = append(key(b, "cost"), '{')
	b = appendMicros(key(b, "input"), u.cost[0])
	b = appendMicros(key(b, "output"), u.cost[1])
	b = appendMicros(key(b, "cacheRead"), u.cost[2])
	b = appendMicros(key(b, "cacheWrite"), u.cost[3])
	b = appendMicros(key(b, "total"), u.costTotal())
	return append(b, '}', '}')
}
