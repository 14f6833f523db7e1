package export

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// IsCatalogError reports a DuckDB catalog error (a table, view or function
// the query names does not exist), by the error's type, not its text.
func IsCatalogError(err error) bool {
	var de *duckdb.Error
	return errors.As(err, &de) && de.Type == duckdb.ErrorTypeCatalog
}

// MissingTables returns the tables and views query reads (its FROM and
// JOIN references, common table expressions excepted) that db does not
// have, sorted. It asks DuckDB's own parser (json_serialize_sql), so
// quoting, comments and nesting are as DuckDB reads them; a query it
// cannot parse gives none.
func MissingTables(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	var raw string
	if err := db.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", query).Scan(&raw); err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal([]byte(raw), &tree); err != nil {
		return nil, err
	}
	refs, ctes := map[string]bool{}, map[string]bool{}
	collectTableRefs(tree, refs, ctes)
	if len(refs) == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT lower(table_name) FROM duckdb_tables() WHERE database_name = current_database()
		UNION ALL SELECT lower(view_name) FROM duckdb_views() WHERE database_name = current_database() OR internal`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		have[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for name := range refs {
		if !have[strings.ToLower(name)] && !ctes[strings.ToLower(name)] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// collectTableRefs walks json_serialize_sql's tree: every BASE_TABLE
// reference without a catalog goes into refs (a reference to another
// attached database is not this database's to miss), every CTE name
// into ctes.
func collectTableRefs(v any, refs, ctes map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "BASE_TABLE" {
			if name, ok := x["table_name"].(string); ok && name != "" {
				if cat, _ := x["catalog_name"].(string); cat == "" {
					refs[name] = true
				}
			}
		}
		if m, ok := x["cte_map"].(map[string]any); ok {
			if list, ok := m["map"].([]any); ok {
				for _, e := range list {
					if kv, ok := e.(map[string]any); ok {
						if k, ok := kv["key"].(string); ok {
							ctes[strings.ToLower(k)] = true
						}
					}
				}
			}
		}
		for _, c := range x {
			collectTableRefs(c, refs, ctes)
		}
	case []any:
		for _, c := range x {
			collectTableRefs(c, refs, ctes)
		}
	}
}

// ReadsSkippedToolUses reports whether query reads tool_uses or tool_calls
// (by DuckDB's parser, as MissingTables) in a database made with
// Options.SkipToolUses, where tool_uses is empty: the answer would be
// wrong, not merely empty.
func ReadsSkippedToolUses(ctx context.Context, db *sql.DB, query string) (bool, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()
		AND schema_name = 'main' AND table_name = ?`, metaTable).Scan(&n); err != nil || n == 0 {
		return false, err
	}
	var skipped bool
	if err := db.QueryRowContext(ctx, "SELECT count(*) > 0 FROM "+metaTable+" WHERE key = 'no_tool_uses' AND value = 'true'").
		Scan(&skipped); err != nil || !skipped {
		return false, err
	}
	var raw string
	if err := db.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", query).Scan(&raw); err != nil {
		return false, err
	}
	var tree any
	if err := json.Unmarshal([]byte(raw), &tree); err != nil {
		return false, err
	}
	refs, ctes := map[string]bool{}, map[string]bool{}
	collectTableRefs(tree, refs, ctes)
	for name := range refs {
		if n := strings.ToLower(name); (n == TableToolUses || n == "tool_calls") && !ctes[n] {
			return true, nil
		}
	}
	return false, nil
}
