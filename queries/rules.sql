-- Rules that more than one file applies: SQL expressions, not statements.
-- export.sql and report.sql include them by name in double braces, so each rule is
-- written once in SQL (and once in Go: export's costOf, tested against
-- these in report/costrule_test.go and queries/rules_test.go).

-- name: cost_source_auto
-- SPEC.md §4, --cost auto: 'recorded' when the recorded cost is present and
-- non-zero, or zero for a record without tokens; else 'calculated' when a
-- calculated cost is present; else NULL (unpriced, never $0). Over a row with
-- recorded_cost_total, calculated_cost_total, input, output, cache_read and
-- cache_write.
CASE WHEN recorded_cost_total IS NOT NULL
          AND (recorded_cost_total <> 0 OR input + output + cache_read + cache_write = 0) THEN 'recorded'
     WHEN calculated_cost_total IS NOT NULL THEN 'calculated'
END

-- name: cost_source_recorded
-- --cost recorded: 'recorded' when the record carries a cost, else NULL.
CASE WHEN recorded_cost_total IS NOT NULL THEN 'recorded' END

-- name: cost_source_calculate
-- --cost calculate: 'calculated' when the tokens could be priced, else NULL.
CASE WHEN calculated_cost_total IS NOT NULL THEN 'calculated' END
