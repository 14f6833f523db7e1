package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/sessions-etl/sessions-etl/export"
)

// Export stages (issue 4): the full export to both sinks, to each sink
// alone, an unchanged re-run, and DuckDB extracting the same tables from
// the same files with its own read_json, written to a database and to
// Parquet, in a child process of its own.
func init() {
	stageMakers = append(stageMakers, func(bin, home, work string) []stage {
		out := func(name string) string { return filepath.Join(work, name) }
		clean := func(paths ...string) func() error {
			return func() error {
				for _, p := range paths {
					if err := os.RemoveAll(p); err != nil {
						return err
					}
				}
				return nil
			}
		}
		const cmp = "duckdb read_json extract"
		both := []string{bin, "export", "--quiet", "--duckdb", out("export.duckdb"), "--parquet", out("export-parquet"), home}
		return []stage{
			{name: "export (duckdb + parquet)", compare: cmp, argv: both, okExit: []int{1},
				setup: clean(out("export.duckdb"), out("export.duckdb.wal"), out("export-parquet"))},
			{name: "export re-run (unchanged)", compare: "export (duckdb + parquet)", argv: both, okExit: []int{1},
				setup: func() error {
					if _, err := os.Stat(filepath.Join(out("export-parquet"), "_sessions_etl.json")); err == nil {
						return nil
					}
					cmd := exec.Command(both[0], both[1:]...)
					if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
						return fmt.Errorf("first export: %w", err)
					}
					return nil
				}},
			{name: "export (duckdb)", compare: cmp, okExit: []int{1},
				argv:  []string{bin, "export", "--quiet", "--duckdb", out("export-only.duckdb"), home},
				setup: clean(out("export-only.duckdb"), out("export-only.duckdb.wal"))},
			{name: "export (parquet)", compare: cmp, okExit: []int{1},
				argv:  []string{bin, "export", "--quiet", "--parquet", out("export-only-parquet"), home},
				setup: clean(out("export-only-parquet"))},
			{name: cmp, argv: []string{"", "child:duckdb-extract", home, out("duckdb-extract.duckdb"), out("duckdb-extract-parquet")},
				setup: clean(out("duckdb-extract.duckdb"), out("duckdb-extract.duckdb.wal"), out("duckdb-extract-parquet"))},
		}
	})
	childModes["duckdb-extract"] = duckdbExtract
}

// duckdbExtract is DuckDB doing the export's extraction itself: read_json
// over every session file into entries, usage and content_blocks tables of
// a database file, then each table to zstd Parquet.
func duckdbExtract(args []string) error {
	home, dbPath, pqDir := args[0], args[1], args[2]
	if err := os.MkdirAll(pqDir, 0o755); err != nil {
		return err
	}
	db, err := export.OpenDB(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	usage := `STRUCT(input BIGINT, output BIGINT, cacheRead BIGINT, cacheWrite BIGINT, totalTokens BIGINT,
		cost STRUCT(input DOUBLE, output DOUBLE, cacheRead DOUBLE, cacheWrite DOUBLE, total DOUBLE))`
	stmts := []string{
		fmt.Sprintf(`CREATE TABLE raw AS SELECT filename AS path, row_number() OVER () AS rn, * EXCLUDE (filename)
FROM read_json('%s/**/*.jsonl', format='newline_delimited', filename=true, ignore_errors=true, maximum_object_size=536870912,
  columns={type: 'VARCHAR', id: 'VARCHAR', parentId: 'VARCHAR', timestamp: 'VARCHAR', customType: 'VARCHAR', provider: 'VARCHAR',
    modelId: 'VARCHAR', thinkingLevel: 'VARCHAR', content: 'JSON', usage: '%s', childUsage: '%s',
    message: 'STRUCT(role VARCHAR, content JSON, provider VARCHAR, model VARCHAR, api VARCHAR, stopReason VARCHAR, toolCallId VARCHAR,
      toolName VARCHAR, isError BOOLEAN, timestamp BIGINT, customType VARCHAR, usage %s)'})`, home, usage, usage, usage),
		`CREATE TABLE entries AS SELECT path, rn, id AS entry_id, parentId AS parent_id, type, TRY_CAST(timestamp AS TIMESTAMPTZ) AS timestamp,
  message.role AS role, coalesce(customType, message.customType) AS custom_type, coalesce(message.provider, provider) AS provider,
  coalesce(message.model, modelId) AS model_id, thinkingLevel AS thinking_level FROM raw WHERE type IS DISTINCT FROM 'session'`,
		`CREATE TABLE usage AS SELECT path, rn, id AS entry_id, TRY_CAST(timestamp AS TIMESTAMPTZ) AS timestamp,
  CASE WHEN message.role = 'assistant' THEN 'assistant' WHEN message.role = 'toolResult' THEN 'tool_result'
       WHEN type = 'child_usage_attributed' THEN 'child_usage' ELSE type END AS kind,
  message.provider, message.api, message.model, message.stopReason AS stop_reason, u.input, u.output, u.cacheRead AS cache_read,
  u.cacheWrite AS cache_write, u.totalTokens AS total_tokens, u.cost.total AS recorded_cost_total
FROM (SELECT *, coalesce(message.usage, usage, childUsage) AS u FROM raw) WHERE u IS NOT NULL`,
		`CREATE TABLE content_blocks AS SELECT path, rn, id AS entry_id, b.i - 1 AS block_index, json_extract_string(b.blk, '$.type') AS block_type,
  coalesce(json_extract_string(b.blk, '$.text'), json_extract_string(b.blk, '$.thinking')) AS text,
  json_extract_string(b.blk, '$.id') AS tool_call_id, json_extract_string(b.blk, '$.name') AS tool_name,
  json_extract(b.blk, '$.arguments')::VARCHAR AS arguments_json, json_extract_string(b.blk, '$.mimeType') AS mime_type
FROM (SELECT path, rn, id, unnest(CAST(coalesce(message.content, content) AS JSON[])) AS blk,
        unnest(range(1, 1 + json_array_length(coalesce(message.content, content))::BIGINT)) AS i
      FROM raw WHERE json_type(coalesce(message.content, content)) = 'ARRAY') b`,
		`DROP TABLE raw`,
		`CHECKPOINT`,
	}
	for _, t := range []string{"entries", "usage", "content_blocks"} {
		stmts = append(stmts, fmt.Sprintf(`COPY %s TO '%s' (FORMAT parquet, COMPRESSION zstd)`, t, filepath.Join(pqDir, t)))
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(q, "\n", 2)[0], err)
		}
	}
	var entries, usageRows, blocks int64
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM usage), (SELECT count(*) FROM content_blocks)`).
		Scan(&entries, &usageRows, &blocks); err != nil {
		return err
	}
	fmt.Printf("entries=%d usage=%d content_blocks=%d\n", entries, usageRows, blocks)
	return nil
}
