package export

import (
	"context"
	"slices"
	"testing"
)

// TestMissingTables: the tables a query reads that the database lacks,
// as DuckDB's parser sees them: joins, subqueries and quoted names
// count; common table expressions, functions and tables that exist do
// not; a catalog error is told by its type.
func TestMissingTables(t *testing.T) {
	db, err := OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE usage(a INT); CREATE VIEW counted_usage AS SELECT * FROM usage"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"select count(*) from entries", []string{"entries"}},
		{"select * from usage u join (select * from \"Content_Blocks\") c using (a)", []string{"Content_Blocks"}},
		{"with entries as (select 1 as a) select * from entries join counted_usage using (a)", nil},
		{"select nonsense(1)", nil},
		{"select * from USAGE where a in (select a from no_such_table)", []string{"no_such_table"}},
		{"select * from duckdb_tables()", nil},
		{"this is not sql", nil},
	} {
		got, err := MissingTables(ctx, db, c.q)
		if err != nil {
			t.Errorf("%q: %v", c.q, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: missing %q, want %q", c.q, got, c.want)
		}
	}
	_, qerr := db.ExecContext(ctx, "select * from entries")
	_, ferr := db.ExecContext(ctx, "select nonsense(1)")
	_, perr := db.ExecContext(ctx, "select from from")
	if !IsCatalogError(qerr) || !IsCatalogError(ferr) || IsCatalogError(perr) {
		t.Errorf("IsCatalogError: table %v, function %v, parser %v; want true, true, false", IsCatalogError(qerr), IsCatalogError(ferr), IsCatalogError(perr))
	}
}
