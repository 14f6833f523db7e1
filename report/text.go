package report

// Text helpers for other renderings of reports (the dashboard): the same
// spelling of amounts and counts as the tables.

// CostText is a cost cell: "$1.23", "$1.23 + unpriced", "unpriced"
// (never $0.00 for usage without a price).
func CostText(u Usage) string { return costText(u) }

// Money formats dollars as the tables do.
func Money(v float64) string { return money(v) }

// Num formats an integer with thousands separators.
func Num(n int64) string { return num(n) }

// ModelLabel is "provider/model", "(no model)" when neither is known.
func ModelLabel(k ModelKey) string { return modelKeyLabel(k) }

// Title is the line above a report's table: kind, zone, cost mode, prices
// and filters.
func (r *Report) Title() string { return r.title(Table) }
