-- Rules that more than one file applies: SQL expressions, not statements.
-- export.sql and report.sql include them by name in double braces, so each rule is
-- written once in SQL (and once in Go: export's costOf, tested against
-- these in report/costrule_test.go and queries/rules_test.go).

-- name: auto_uses_recorded
-- SPEC.md §4, --cost auto: a record keeps its recorded cost when it has one
-- and it is non-zero, or zero for a record without tokens. A condition over
-- a row with recorded_cost_total, input, output, cache_read and cache_write.
recorded_cost_total IS NOT NULL
  AND (recorded_cost_total <> 0 OR input + output + cache_read + cache_write = 0)

-- name: cost_source_auto
-- The cost source under --cost auto: 'recorded' by auto_uses_recorded, else
-- 'calculated' when a calculated cost is present (calculated_cost_total),
-- else NULL (unpriced, never $0).
CASE WHEN {{auto_uses_recorded}} THEN 'recorded'
     WHEN calculated_cost_total IS NOT NULL THEN 'calculated'
END

-- name: cost_source_recorded
-- --cost recorded: 'recorded' when the record carries a cost, else NULL.
CASE WHEN recorded_cost_total IS NOT NULL THEN 'recorded' END

-- name: cost_source_calculate
-- --cost calculate: 'calculated' when the tokens could be priced, else NULL.
CASE WHEN calculated_cost_total IS NOT NULL THEN 'calculated' END
