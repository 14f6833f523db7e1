package main

import (
	"bufio"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeRows writes a query's rows to out: JSON Lines with --json, CSV
// with --csv, else an aligned table. path names the database in an error
// DuckDB returns while the rows are read.
func writeRows(out *bufio.Writer, rows *sql.Rows, opts *queryOptions, path string) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	kinds := make([]string, len(types))
	for i, t := range types {
		kinds[i] = t.DatabaseTypeName()
	}
	var w rowWriter
	switch {
	case opts.JSON:
		w = &jsonRows{w: out, cols: cols, types: kinds}
	case opts.CSV:
		w = &csvRows{w: csv.NewWriter(out), types: kinds}
	default:
		w = &tableRows{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0), types: kinds}
	}
	if err := w.header(cols); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := w.row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("duckdb %s: %w", path, err)
	}
	return w.flush()
}

type rowWriter interface {
	header(cols []string) error
	row(vals []any) error
	flush() error
}

// text renders a value for the table and CSV outputs: DATE values as
// YYYY-MM-DD, instants in UTC, floats with at most 10 significant digits.
func text(v any, typ string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return formatTime(x, typ)
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// formatTime formats a DATE as YYYY-MM-DD, a TIME as hh:mm:ss and any other
// instant in UTC.
func formatTime(t time.Time, typ string) string {
	switch typ {
	case "DATE":
		return t.Format(time.DateOnly)
	case "TIME":
		return t.Format("15:04:05.999999")
	}
	return t.UTC().Format("2006-01-02 15:04:05.999999")
}

// displayDigits is the most significant digits a float is shown with in
// the table and CSV outputs: sums of DOUBLE costs carry binary noise in the
// last of their 17 digits (0.23359430000000003).
const displayDigits = 10

// formatFloat rounds x to displayDigits significant digits and prints the
// result without exponent when it is between 1e-9 and 1e15.
func formatFloat(x float64, bits int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, bits)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', displayDigits, 64), 64)
	if a := math.Abs(r); a == 0 || (a >= 1e-9 && a < 1e15) {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// jsonValue renders a value for JSON: DATE values as YYYY-MM-DD, instants
// as RFC 3339 UTC, NaN and infinities (which JSON cannot hold) as null.
func jsonValue(v any, typ string) any {
	switch x := v.(type) {
	case time.Time:
		switch typ {
		case "DATE", "TIME":
			return formatTime(x, typ)
		}
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	case []byte:
		return string(x)
	}
	return v
}

// jsonRows writes one JSON object per row, keys in column order.
type jsonRows struct {
	w     io.Writer
	cols  []string
	types []string
}

func (j *jsonRows) header([]string) error { return nil }
func (j *jsonRows) flush() error          { return nil }
func (j *jsonRows) row(vals []any) error {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range j.cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		v, err := json.Marshal(jsonValue(vals[i], j.types[i]))
		if err != nil {
			v = []byte(strconv.Quote(fmt.Sprint(vals[i])))
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(j.w, b.String())
	return err
}

type csvRows struct {
	w     *csv.Writer
	types []string
}

func (c *csvRows) header(cols []string) error { return c.w.Write(cols) }
func (c *csvRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		rec[i] = text(v, c.types[i])
	}
	return c.w.Write(rec)
}
func (c *csvRows) flush() error { c.w.Flush(); return c.w.Error() }

type tableRows struct {
	w     *tabwriter.Writer
	types []string
}

func (t *tableRows) header(cols []string) error {
	_, err := fmt.Fprintln(t.w, strings.Join(cols, "\t"))
	return err
}
func (t *tableRows) row(vals []any) error {
	rec := make([]string, len(vals))
	for i, v := range vals {
		if v == nil {
			rec[i] = "NULL" // not an empty string
			continue
		}
		rec[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(text(v, t.types[i]))
	}
	_, err := fmt.Fprintln(t.w, strings.Join(rec, "\t"))
	return err
}
func (t *tableRows) flush() error { return t.w.Flush() }
