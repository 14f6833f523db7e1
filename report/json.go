package report

import (
	"encoding/json"
	"io"
	"time"
)

// The JSON of daily, monthly and session reports has the top-level shape
// and key names of ccusage's (`ccusage pi daily --json`, 20.0.24): an array
// named daily / monthly / sessions whose items carry date / month /
// sessionId, inputTokens, outputTokens, cacheCreationTokens,
// cacheReadTokens, totalTokens, totalCost, modelsUsed and modelBreakdowns
// (modelName, inputTokens, outputTokens, cacheCreationTokens,
// cacheReadTokens, cost), and a totals object, so scripts written for
// ccusage keep working. Weekly follows ccusage's weekly ("weekly" items
// keyed by "period", the Monday the week starts on). The other reports use
// the same item shape under projects / models / providers.
//
// Extra fields: records, recordedRecords, calculatedRecords,
// unpricedRecords, unpricedTokens and costIncomplete on items, breakdowns
// and totals; totalCost (and a breakdown's cost) is always a number, the
// cost of the priced records (SPEC.md §7.6), and costIncomplete is true
// when some records have no cost (0 when none has one). The top level adds
// "unpriced" (usage without a cost, per provider/model), "files" (the
// files not used, "rejected", and used in part, "salvaged") and "report"
// (the question asked: kind, zone, filters, cost mode, price table).

// jsonTokens are the ccusage token keys plus our record counts.
type jsonTokens struct {
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
	TotalCost           float64 `json:"totalCost"`
	Records             int64   `json:"records"`
	RecordedRecords     int64   `json:"recordedRecords"`
	CalculatedRecords   int64   `json:"calculatedRecords"`
	UnpricedRecords     int64   `json:"unpricedRecords"`
	UnpricedTokens      int64   `json:"unpricedTokens"`
	CostIncomplete      bool    `json:"costIncomplete"`
}

func tokensJSON(u Usage) jsonTokens {
	return jsonTokens{InputTokens: u.Input, OutputTokens: u.Output, CacheCreationTokens: u.CacheWrite,
		CacheReadTokens: u.CacheRead, TotalTokens: u.TotalTokens, TotalCost: costJSON(u), Records: u.Records,
		RecordedRecords: u.RecordedRecords, CalculatedRecords: u.CalculatedRecords,
		UnpricedRecords: u.Unpriced.Records, UnpricedTokens: u.Unpriced.TotalTokens, CostIncomplete: !u.Complete()}
}

// costJSON is the cost of the priced records of u: always a number, so
// that sums in jq or JavaScript work; costIncomplete says when it leaves
// records out (SPEC.md §7.6).
func costJSON(u Usage) float64 { return u.Cost }

type jsonBreakdown struct {
	ModelName           *string `json:"modelName"`
	Provider            *string `json:"provider"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
	Cost                float64 `json:"cost"`
	Records             int64   `json:"records"`
	UnpricedRecords     int64   `json:"unpricedRecords"`
	CostIncomplete      bool    `json:"costIncomplete"`
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func breakdownsJSON(ms []ModelUsage) (used []string, out []jsonBreakdown) {
	used, out = []string{}, []jsonBreakdown{}
	seen := map[string]bool{}
	for _, m := range ms {
		if m.Model != "" && !seen[m.Model] {
			seen[m.Model] = true
			used = append(used, m.Model)
		}
		out = append(out, jsonBreakdown{ModelName: optString(m.Model), Provider: optString(m.Provider),
			InputTokens: m.Input, OutputTokens: m.Output, CacheCreationTokens: m.CacheWrite, CacheReadTokens: m.CacheRead,
			TotalTokens: m.TotalTokens, Cost: costJSON(m.Usage), Records: m.Records, UnpricedRecords: m.Unpriced.Records,
			CostIncomplete: !m.Complete()})
	}
	return used, out
}

// jsonUsage is the part of a report item every usage report shares.
type jsonUsage struct {
	jsonTokens
	ModelsUsed      []string        `json:"modelsUsed"`
	ModelBreakdowns []jsonBreakdown `json:"modelBreakdowns"`
}

func usageJSON(row Row) jsonUsage {
	u := jsonUsage{jsonTokens: tokensJSON(row.Usage)}
	u.ModelsUsed, u.ModelBreakdowns = breakdownsJSON(row.Models)
	return u
}

// One item type per kind: the key fields first (null when unknown), then
// the shared usage fields.
type (
	jsonDaily struct {
		Date *string `json:"date"`
		jsonUsage
	}
	jsonWeekly struct {
		Period *string `json:"period"`
		Week   *string `json:"week"`
		jsonUsage
	}
	jsonMonthly struct {
		Month *string `json:"month"`
		jsonUsage
	}
	jsonSession struct {
		SessionID string `json:"sessionId"`
		jsonUsage
		FirstActivity   *string `json:"firstActivity"`
		LastActivity    *string `json:"lastActivity"`
		ProjectPath     *string `json:"projectPath"`
		Project         *string `json:"project"`
		Source          *string `json:"source"`
		Name            *string `json:"name"`
		ParentSessionID *string `json:"parentSessionId"`
		// Subagents and WithSubagents: the sessions this one's subagent
		// roll-ups stand for, and its usage with theirs (SPEC.md §7.3).
		Subagents     []string    `json:"subagents,omitempty"`
		WithSubagents *jsonTokens `json:"withSubagents,omitempty"`
	}
	jsonProject struct {
		Project  *string `json:"project"`
		Cwd      *string `json:"cwd"` // the project's cwd (SPEC.md §7.5: one cwd per label)
		Sessions int     `json:"sessions"`
		jsonUsage
	}
	jsonModel struct {
		Provider  *string `json:"provider"`
		ModelName *string `json:"modelName"`
		jsonUsage
	}
	jsonProvider struct {
		Provider *string `json:"provider"`
		jsonUsage
	}
)

// isoMillis formats an instant like ccusage: UTC with milliseconds (nil
// when unknown).
func isoMillis(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	return &s
}

type jsonUnpriced struct {
	Provider            *string `json:"provider"`
	ModelName           *string `json:"modelName"`
	Records             int64   `json:"records"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	TotalTokens         int64   `json:"totalTokens"`
}

type jsonPricing struct {
	Source    string `json:"source"`
	Retrieved string `json:"retrieved"`
}

type jsonMeta struct {
	Kind     string      `json:"kind"`
	Timezone *string     `json:"timezone"` // IANA name; null when unknown
	Since    *string     `json:"since"`
	Until    *string     `json:"until"`
	Source   *string     `json:"source"`
	Project  *string     `json:"project"`
	Model    *string     `json:"model"`
	CostMode string      `json:"costMode"`
	Pricing  jsonPricing `json:"pricing"`
}

type jsonTool struct {
	ToolName    *string          `json:"toolName"`
	Calls       int64            `json:"calls"`
	Results     int64            `json:"results"`
	Errors      int64            `json:"errors"`
	ErrorRate   float64          `json:"errorRate"`
	OutputBytes int64            `json:"outputBytes"`
	Models      []jsonToolModels `json:"modelBreakdowns,omitempty"`
}

type jsonToolModels struct {
	ModelName   *string `json:"modelName"`
	Provider    *string `json:"provider"`
	Calls       int64   `json:"calls"`
	Results     int64   `json:"results"`
	Errors      int64   `json:"errors"`
	OutputBytes int64   `json:"outputBytes"`
}

// arrayName is the name of the report array of each kind.
var arrayName = map[Kind]string{Daily: "daily", Weekly: "weekly", Monthly: "monthly", Session: "sessions",
	Project: "projects", Model: "models", Provider: "providers", Tools: "tools"}

func dateOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.Format(time.DateOnly)
	return &s
}

func (r *Report) meta() jsonMeta {
	m := jsonMeta{Kind: string(r.Kind), Timezone: optString(r.ZoneName), Since: dateOrNil(r.Since), Until: dateOrNil(r.Until),
		Source: optString(r.Source), Project: optString(r.Project), Model: optString(r.Model), CostMode: string(r.CostMode)}
	if r.Pricing != nil {
		m.Pricing = jsonPricing{Source: r.Pricing.Source, Retrieved: r.Pricing.Retrieved}
	}
	return m
}

type jsonProblemFile struct {
	Path   string   `json:"path"`
	Status string   `json:"status"`
	Codes  []string `json:"codes"`
	Lines  []int    `json:"lines"`
}

type jsonFiles struct {
	Rejected []jsonProblemFile `json:"rejected"`
	Salvaged []jsonProblemFile `json:"salvaged"`
}

func problemFilesJSON(fs []ProblemFile) []jsonProblemFile {
	out := []jsonProblemFile{}
	for _, f := range fs {
		jf := jsonProblemFile{Path: f.Path, Status: f.Status, Codes: f.Codes, Lines: f.Lines}
		if jf.Codes == nil {
			jf.Codes = []string{}
		}
		if jf.Lines == nil {
			jf.Lines = []int{}
		}
		out = append(out, jf)
	}
	return out
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	out := map[string]any{"report": r.meta(),
		"files": jsonFiles{Rejected: problemFilesJSON(r.Files.Rejected), Salvaged: problemFilesJSON(r.Files.Salvaged)}}
	if r.Kind == Tools {
		tools := []jsonTool{}
		for _, t := range r.ToolRows {
			jt := jsonTool{ToolName: optString(t.Tool), Calls: t.Calls, Results: t.Results, Errors: t.Errors,
				ErrorRate: t.ErrorRate(), OutputBytes: t.OutputBytes}
			for _, m := range t.Models {
				jt.Models = append(jt.Models, jsonToolModels{ModelName: optString(m.Model), Provider: optString(m.Provider),
					Calls: m.Calls, Results: m.Results, Errors: m.Errors, OutputBytes: m.OutputBytes})
			}
			tools = append(tools, jt)
		}
		t := r.ToolTotals
		out["tools"] = tools
		out["totals"] = jsonTool{Calls: t.Calls, Results: t.Results, Errors: t.Errors, ErrorRate: t.ErrorRate(), OutputBytes: t.OutputBytes}
		return encodeJSON(w, out)
	}
	rows := []any{}
	for _, row := range r.Rows {
		key, u := optString(row.Key), usageJSON(row)
		switch r.Kind {
		case Daily:
			rows = append(rows, jsonDaily{key, u})
		case Weekly:
			rows = append(rows, jsonWeekly{key, optString(row.Week), u})
		case Monthly:
			rows = append(rows, jsonMonthly{key, u})
		case Session:
			js := jsonSession{SessionID: row.Key, jsonUsage: u, FirstActivity: isoMillis(row.First), LastActivity: isoMillis(row.Last)}
			if s := row.Session; s != nil {
				js.ProjectPath, js.Project, js.Source = optString(s.Cwd), optString(s.Project), optString(s.Source)
				js.Name, js.ParentSessionID = optString(s.Name), optString(s.ParentSessionID)
			}
			if row.WithSubagents != nil {
				w := tokensJSON(*row.WithSubagents)
				js.Subagents, js.WithSubagents = row.Subagents, &w
			}
			rows = append(rows, js)
		case Project:
			rows = append(rows, jsonProject{key, optString(row.Cwd), row.Sessions, u})
		case Model:
			rows = append(rows, jsonModel{optString(row.Provider), optString(row.ModelKey.Model), u})
		case Provider:
			rows = append(rows, jsonProvider{key, u})
		}
	}
	out[arrayName[r.Kind]] = rows
	out["totals"] = tokensJSON(r.Totals)
	un := []jsonUnpriced{}
	for _, u := range r.Unpriced {
		un = append(un, jsonUnpriced{Provider: optString(u.Provider), ModelName: optString(u.Model), Records: u.Records,
			InputTokens: u.Input, OutputTokens: u.Output, CacheCreationTokens: u.CacheWrite, CacheReadTokens: u.CacheRead,
			TotalTokens: u.TotalTokens})
	}
	out["unpriced"] = un
	if bj := r.budgetJSON(); bj != nil {
		out["budget"] = bj
	}
	return encodeJSON(w, out)
}

// encodeJSON writes v indented like ccusage (two spaces), without HTML
// escaping of <, > and & in names.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
