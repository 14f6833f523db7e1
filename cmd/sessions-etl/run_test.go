package main

// Each command's run called directly, without cobra (cli/cli's Options +
// runF shape): options built by hand, an IO of buffers, the answer checked
// against the cases' expected.json or values worked out by hand from the
// case files. Flag parsing is tested apart, in flags_test.go, through the
// runF seam.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessions-etl/sessions-etl/internal/config"
	"github.com/sessions-etl/sessions-etl/report"
	"github.com/sessions-etl/sessions-etl/synth"
)

const runCaseRoot = "../../testdata/cases"

// runCase is the absolute directory of a case.
func runCase(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(runCaseRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runExpected decodes a case's expected.json into v.
func runExpected(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(runCaseRoot, name, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// runTestIO is an IO of buffers at the instant now, with an empty home, no
// environment variable and no configuration file.
func runTestIO(t *testing.T, now time.Time) (ios *IO, out, errOut *bytes.Buffer) {
	t.Helper()
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	ios = &IO{In: strings.NewReader(""), Out: out, ErrOut: errOut, Now: func() time.Time { return now },
		Home: t.TempDir(), Env: func(string) (string, bool) { return "", false }, Config: &config.Config{},
		Getenv: func(string) string { return "" }}
	return ios, out, errOut
}

// jsonLines decodes each line of out.
func decodeJSONLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		rows = append(rows, m)
	}
	return rows
}

func fileSum256(t *testing.T, p string) string {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// copySessions copies the .jsonl files of a case into a new directory.
func copyCaseSessions(t *testing.T, caseName string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(runCase(t, caseName))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(runCase(t, caseName), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func nearUSD(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// validateErrorStatuses are the verdicts validate counts as errors (README,
// SPEC.md §1): the agent will not load such a file.
var validateErrorStatuses = map[string]bool{"not_session": true, "future_version": true, "unrecognized_version": true,
	"torn": true, "corrupt": true, "unreadable": true}

// c20Case is the case the reader commands run on: three files, four billed
// records with recorded costs. Per UTC day, from the files' records:
// 2025-04-01 120+200 input, 30+40 output, $0.00081+$0.00123; 2025-04-02
// 300, 60, $0.0018; 2025-04-03 50, 10, $0.0003 (expected.json's usage
// gives the totals: 670, 140, $0.00414).
const c20Case = "c20-whitespace-separators"

var c20Days = []struct {
	day           string
	input, output int64
	cost          float64
}{
	{"2025-04-01", 320, 70, 0.00204},
	{"2025-04-02", 300, 60, 0.0018},
	{"2025-04-03", 50, 10, 0.0003},
}

type runCaseUsage struct {
	Usage struct {
		Records int64   `json:"counted_records"`
		Input   int64   `json:"input"`
		Output  int64   `json:"output"`
		Cost    float64 `json:"cost_total"`
	} `json:"usage"`
}

func TestRunValidateWithoutCobra(t *testing.T) {
	for _, c := range []string{"c01-torn-final-record", "c03-future-version", "c09-crlf-line-endings", "c14-atomic-v4-billed-usage-kinds", c20Case} {
		t.Run(c, func(t *testing.T) {
			var exp struct {
				Validate map[string]struct {
					Status        string `json:"status"`
					FormatVersion *int   `json:"format_version"`
				} `json:"validate"`
			}
			runExpected(t, c, &exp)
			ios, out, _ := runTestIO(t, time.Now())
			opts := &validateOptions{globalOptions: &globalOptions{JSON: true, Workers: 2}, Paths: []string{runCase(t, c)}, MaxProblems: 20}
			err := runValidate(context.Background(), opts, ios)
			wantFail := false
			for _, v := range exp.Validate {
				wantFail = wantFail || validateErrorStatuses[v.Status]
			}
			if gotFail := errors.Is(err, errFailed); gotFail != wantFail || (err != nil && !gotFail) {
				t.Fatalf("err %v, want failed=%v", err, wantFail)
			}
			rows := decodeJSONLines(t, out.String())
			if len(rows) != len(exp.Validate)+1 {
				t.Fatalf("%d lines, want %d verdicts and a summary:\n%s", len(rows), len(exp.Validate), out)
			}
			for _, r := range rows[:len(rows)-1] {
				name := filepath.Base(r["path"].(string))
				want, ok := exp.Validate[name]
				if !ok {
					t.Errorf("verdict for %s, not in expected.json", name)
					continue
				}
				if r["status"] != want.Status {
					t.Errorf("%s: status %v, want %s", name, r["status"], want.Status)
				}
				if want.FormatVersion != nil && r["format_version"] != float64(*want.FormatVersion) {
					t.Errorf("%s: format_version %v, want %d", name, r["format_version"], *want.FormatVersion)
				}
			}
		})
	}

	// The text output names the problem at its line (expected.json: line 4,
	// torn_final_record), under --quiet as the only output.
	var exp struct {
		Validate map[string]struct {
			Codes []string `json:"codes"`
			Line  int      `json:"line"`
		} `json:"validate"`
	}
	runExpected(t, "c01-torn-final-record", &exp)
	want := exp.Validate["session.jsonl"]
	for _, quiet := range []bool{false, true} {
		ios, out, _ := runTestIO(t, time.Now())
		opts := &validateOptions{globalOptions: &globalOptions{Quiet: quiet, Workers: 1}, Paths: []string{runCase(t, "c01-torn-final-record")}, MaxProblems: 20}
		if err := runValidate(context.Background(), opts, ios); !errors.Is(err, errFailed) {
			t.Fatalf("quiet=%v: err %v, want errFailed", quiet, err)
		}
		line := "session.jsonl:" + strconv.Itoa(want.Line) + ": error " + want.Codes[0] + ": "
		if !strings.Contains(out.String(), line) {
			t.Errorf("quiet=%v: no %q in\n%s", quiet, line, out)
		}
		if lines := strings.Count(strings.TrimSpace(out.String()), "\n") + 1; quiet && lines != 1 {
			t.Errorf("--quiet: %d lines, want the one problem:\n%s", lines, out)
		}
	}
}

// readerOptions are report's options for c20Case with a database of the test's.
func readerOptions(t *testing.T, kind report.Kind, asJSON bool) *reportOptions {
	return &reportOptions{globalOptions: &globalOptions{JSON: asJSON, Workers: 2}, Kind: kind,
		Paths: []string{runCase(t, c20Case)}, DB: filepath.Join(t.TempDir(), "r.duckdb"), Cost: "auto", Color: "never", TZ: "UTC"}
}

func TestRunReportWithoutCobra(t *testing.T) {
	var exp runCaseUsage
	runExpected(t, c20Case, &exp)
	ios, out, errOut := runTestIO(t, time.Date(2025, 4, 10, 12, 0, 0, 0, time.UTC))
	opts := readerOptions(t, report.Daily, true)
	if err := runReport(context.Background(), opts, ios); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var r struct {
		Daily []struct {
			Date   string  `json:"date"`
			Input  int64   `json:"inputTokens"`
			Output int64   `json:"outputTokens"`
			Cost   float64 `json:"totalCost"`
		} `json:"daily"`
		Totals struct {
			Input   int64   `json:"inputTokens"`
			Output  int64   `json:"outputTokens"`
			Cost    float64 `json:"totalCost"`
			Records int64   `json:"records"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Totals.Input != exp.Usage.Input || r.Totals.Output != exp.Usage.Output || !nearUSD(r.Totals.Cost, exp.Usage.Cost) || r.Totals.Records != exp.Usage.Records {
		t.Errorf("totals %+v, want expected.json's %+v", r.Totals, exp.Usage)
	}
	if len(r.Daily) != len(c20Days) {
		t.Fatalf("%d days, want %d:\n%s", len(r.Daily), len(c20Days), out)
	}
	for i, d := range c20Days {
		got := r.Daily[i]
		if got.Date != d.day || got.Input != d.input || got.Output != d.output || !nearUSD(got.Cost, d.cost) {
			t.Errorf("day %d: %+v, want %+v", i, got, d)
		}
	}

	// --order desc, --last 8d at 2025-04-10 (from 2025-04-03): the last
	// day alone; --strict on a clean case exits 0.
	ios, out, _ = runTestIO(t, time.Date(2025, 4, 10, 12, 0, 0, 0, time.UTC))
	opts = readerOptions(t, report.Daily, true)
	opts.Last, opts.Order, opts.Strict = "8d", "desc", true
	if err := runReport(context.Background(), opts, ios); err != nil {
		t.Fatal(err)
	}
	r.Daily = nil
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Daily) != 1 || r.Daily[0].Date != "2025-04-03" || !nearUSD(r.Totals.Cost, 0.0003) {
		t.Errorf("--last 8d: %+v, want 2025-04-03 alone at $0.0003", r)
	}

	// A usage error from the options, before anything is read.
	ios, _, _ = runTestIO(t, time.Now())
	opts = readerOptions(t, report.Daily, true)
	opts.CSV = true
	var ue usageError
	if err := runReport(context.Background(), opts, ios); !errors.As(err, &ue) {
		t.Errorf("--json --csv: %v, want a usage error", err)
	}
}

func TestRunExportThenQueryWithoutCobra(t *testing.T) {
	var exp runCaseUsage
	runExpected(t, c20Case, &exp)
	db := filepath.Join(t.TempDir(), "x.duckdb")
	ios, out, errOut := runTestIO(t, time.Now())
	eo := &exportOptions{globalOptions: &globalOptions{JSON: true, Workers: 2}, Paths: []string{runCase(t, c20Case)},
		DuckDB: db, Cost: "auto", Machine: "test-machine"}
	if err := runExport(context.Background(), eo, ios); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var sum struct {
		Summary struct {
			Files    int `json:"files"`
			Read     int `json:"read"`
			Rejected int `json:"rejected"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if sum.Summary.Files != 3 || sum.Summary.Read != 3 || sum.Summary.Rejected != 0 {
		t.Errorf("summary %+v, want the case's 3 files read", sum.Summary)
	}

	// The daily_usage view of the export, as CSV.
	ios, out, errOut = runTestIO(t, time.Now())
	qo := &queryOptions{globalOptions: &globalOptions{}, DuckDB: db, CSV: true,
		SQL: "SELECT day, records, input, output, cost_total FROM daily_usage ORDER BY day"}
	if err := runQuery(context.Background(), qo, ios); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want := "day,records,input,output,cost_total\n" +
		"2025-04-01,2,320,70,0.00204\n" +
		"2025-04-02,1,300,60,0.0018\n" +
		"2025-04-03,1,50,10,0.0003\n"
	if out.String() != want {
		t.Errorf("daily_usage:\n%s\nwant\n%s", out, want)
	}

	// The totals as JSON Lines, against expected.json; the machine column.
	ios, out, _ = runTestIO(t, time.Now())
	qo = &queryOptions{globalOptions: &globalOptions{JSON: true}, DuckDB: db,
		SQL: "SELECT count(*) AS records, sum(input) AS input, sum(output) AS output, sum(cost_total) AS cost, min(machine) AS machine FROM counted_usage"}
	if err := runQuery(context.Background(), qo, ios); err != nil {
		t.Fatal(err)
	}
	rows := decodeJSONLines(t, out.String())
	if len(rows) != 1 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	got := rows[0]
	if got["records"] != float64(exp.Usage.Records) || got["input"] != float64(exp.Usage.Input) || got["output"] != float64(exp.Usage.Output) ||
		!nearUSD(got["cost"].(float64), exp.Usage.Cost) || got["machine"] != "test-machine" {
		t.Errorf("totals %v, want expected.json's %+v on test-machine", got, exp.Usage)
	}

	// Two statements: a usage error; a missing database: an error naming it.
	ios, _, _ = runTestIO(t, time.Now())
	var ue usageError
	qo = &queryOptions{globalOptions: &globalOptions{}, DuckDB: db, SQL: "SELECT 1; SELECT 2"}
	if err := runQuery(context.Background(), qo, ios); !errors.As(err, &ue) {
		t.Errorf("two statements: %v, want a usage error", err)
	}
	missing := filepath.Join(t.TempDir(), "none.duckdb")
	qo = &queryOptions{globalOptions: &globalOptions{}, DuckDB: missing, SQL: "SELECT 1"}
	if err := runQuery(context.Background(), qo, ios); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing database: %v", err)
	}
}

func TestRunMigrateAndUndoWithoutCobra(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var exp struct {
		Migrate map[string]json.RawMessage `json:"migrate"`
	}
	runExpected(t, c20Case, &exp)
	dir := copyCaseSessions(t, c20Case)
	type want struct {
		Result string `json:"result"`
		Before string `json:"sha256_before"`
		After  string `json:"sha256_after"`
	}
	wants := map[string]want{}
	for name, raw := range exp.Migrate {
		var w want
		if json.Unmarshal(raw, &w) == nil && w.Result != "" {
			wants[name] = w
		}
	}
	if len(wants) != 3 {
		t.Fatalf("expected.json: %d files to migrate", len(wants))
	}
	ios, out, errOut := runTestIO(t, time.Now())
	opts := &migrateOptions{globalOptions: &globalOptions{JSON: true, Workers: 2}, Paths: []string{dir}}
	if err := runMigrate(context.Background(), opts, ios); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	rows := decodeJSONLines(t, out.String())
	runID := ""
	for _, r := range rows {
		if s, ok := r["summary"].(map[string]any); ok {
			runID, _ = s["run_id"].(string)
			continue
		}
		name := filepath.Base(r["path"].(string))
		if r["result"] != wants[name].Result {
			t.Errorf("%s: %v, want %s", name, r["result"], wants[name].Result)
		}
	}
	for name, w := range wants {
		if got := fileSum256(t, filepath.Join(dir, name)); got != w.After {
			t.Errorf("%s after migrate: sha256 %s, want expected.json's %s", name, got, w.After)
		}
	}
	if runID == "" {
		t.Fatalf("no run id in\n%s", out)
	}

	// --undo with a PATH is a usage error; --undo RUN restores every file.
	var ue usageError
	undo := &migrateOptions{globalOptions: &globalOptions{Workers: 2}, Undo: runID, Paths: []string{dir}}
	if err := runMigrate(context.Background(), undo, ios); !errors.As(err, &ue) {
		t.Errorf("--undo with a PATH: %v, want a usage error", err)
	}
	ios, out, _ = runTestIO(t, time.Now())
	undo.Paths = nil
	if err := runMigrate(context.Background(), undo, ios); err != nil {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	for name, w := range wants {
		if got := fileSum256(t, filepath.Join(dir, name)); got != w.Before {
			t.Errorf("%s after undo: sha256 %s, want expected.json's %s", name, got, w.Before)
		}
	}
	if !strings.Contains(out.String(), "3 restored") {
		t.Errorf("undo output:\n%s", out)
	}
}

func TestRunImportWithoutCobra(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var exp struct {
		Import struct {
			Results map[string]string `json:"results"`
			Exit    int               `json:"exit"`
		} `json:"import"`
	}
	runExpected(t, c20Case, &exp)
	src := copyCaseSessions(t, c20Case)
	before := map[string]string{}
	for name := range exp.Import.Results {
		before[name] = fileSum256(t, filepath.Join(src, name))
	}
	store := filepath.Join(t.TempDir(), "store")
	ios, out, errOut := runTestIO(t, time.Now())
	opts := &importOptions{globalOptions: &globalOptions{JSON: true, Workers: 2}, Sources: []string{src}, To: store}
	err := runImport(context.Background(), opts, ios)
	if (err == nil) != (exp.Import.Exit == 0) {
		t.Fatalf("err %v, want exit %d\n%s", err, exp.Import.Exit, errOut)
	}
	n := 0
	for _, r := range decodeJSONLines(t, out.String()) {
		if _, ok := r["summary"]; ok {
			continue
		}
		n++
		name := filepath.Base(r["path"].(string))
		if r["result"] != exp.Import.Results[name] {
			t.Errorf("%s: %v, want %s", name, r["result"], exp.Import.Results[name])
		}
	}
	if n != len(exp.Import.Results) {
		t.Errorf("%d results, want %d:\n%s", n, len(exp.Import.Results), out)
	}
	var copies []string
	filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			copies = append(copies, p)
		}
		return nil
	})
	if len(copies) != 3 {
		t.Errorf("store holds %d session files, want 3: %v", len(copies), copies)
	}
	for name, sum := range before {
		if fileSum256(t, filepath.Join(src, name)) != sum {
			t.Errorf("source %s changed", name)
		}
	}
	// --undo with a SOURCE is a usage error.
	var ue usageError
	undo := &importOptions{globalOptions: &globalOptions{}, Undo: "x", Sources: []string{src}}
	if err := runImport(context.Background(), undo, ios); !errors.As(err, &ue) {
		t.Errorf("--undo with a SOURCE: %v, want a usage error", err)
	}
}

func TestRunSourcesWithoutCobra(t *testing.T) {
	ios, out, _ := runTestIO(t, time.Now())
	dir := filepath.Join(ios.Home, ".pi", "agent", "sessions", "--home-dev--")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(runCase(t, "c09-crlf-line-endings"), "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runSources(context.Background(), &globalOptions{JSON: true}, ios); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range decodeJSONLines(t, out.String()) {
		if r["label"] != "pi" {
			continue
		}
		found = true
		if r["exists"] != true || r["files"] != float64(1) || r["bytes"] != float64(len(raw)) {
			t.Errorf("pi row %v, want 1 file of %d bytes", r, len(raw))
		}
	}
	if !found {
		t.Errorf("no pi row:\n%s", out)
	}
	ios.Home = ""
	var ue usageError
	if err := runSources(context.Background(), &globalOptions{}, ios); !errors.As(err, &ue) {
		t.Errorf("no home: %v, want a usage error", err)
	}
}

func TestRunSynthWithoutCobra(t *testing.T) {
	ios, out, _ := runTestIO(t, time.Now())
	dir := filepath.Join(t.TempDir(), "home")
	opts := &synthOptions{globalOptions: &globalOptions{Workers: 2}, Out: dir, Sessions: 6, Seed: 3, Size: "0", Profile: "default"}
	if err := runSynth(context.Background(), opts, ios); err != nil {
		t.Fatal(err)
	}
	m, err := synth.LoadManifest(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			onDisk = append(onDisk, p)
		}
		return nil
	})
	if len(onDisk) == 0 || len(onDisk) != len(m.Files) || m.Seed != 3 {
		t.Errorf("%d files on disk, the manifest lists %d (seed %d)", len(onDisk), len(m.Files), m.Seed)
	}
	if !strings.HasPrefix(out.String(), "Wrote "+strconv.Itoa(len(onDisk))+" JSONL files") {
		t.Errorf("output %q, want it to count %d files", out, len(onDisk))
	}
	// The same home again: nothing to do; another seed into it: a usage error.
	out.Reset()
	if err := runSynth(context.Background(), opts, ios); err != nil || !strings.Contains(out.String(), "already holds this home") {
		t.Errorf("again: %v %q", err, out)
	}
	var ue usageError
	other := *opts
	other.Seed = 4
	if err := runSynth(context.Background(), &other, ios); !errors.As(err, &ue) {
		t.Errorf("another seed into a full directory: %v, want a usage error", err)
	}
	other.Out = ""
	if err := runSynth(context.Background(), &other, ios); !errors.As(err, &ue) {
		t.Errorf("no --out: %v, want a usage error", err)
	}
}

// TestRunReadersWithoutCobra runs report blocks, budget check, dashboard
// and statusline on c20Case at 2025-04-03 10:00 UTC: the last record
// (09:00:03) opened a block at 09:00 that ends at 14:00.
func TestRunReadersWithoutCobra(t *testing.T) {
	now := time.Date(2025, 4, 3, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()

	t.Run("blocks", func(t *testing.T) {
		ios, out, errOut := runTestIO(t, now)
		bo := &blocksOptions{reportOptions: readerOptions(t, report.Daily, true), NoGaps: true}
		if err := runBlocks(ctx, bo, ios); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		var r struct {
			Blocks []struct {
				Start  string  `json:"startTime"`
				Active bool    `json:"isActive"`
				Cost   float64 `json:"costUSD"`
			} `json:"blocks"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(r.Blocks) != 3 {
			t.Fatalf("%d blocks, want one per day:\n%s", len(r.Blocks), out)
		}
		for i, d := range c20Days {
			b := r.Blocks[i]
			if !strings.HasPrefix(b.Start, d.day+"T09:00:00") || !nearUSD(b.Cost, d.cost) || b.Active != (i == 2) {
				t.Errorf("block %d: %+v, want %sT09:00 at $%g, active only the last", i, b, d.day, d.cost)
			}
		}
		bo.Active, bo.Recent = true, true
		var ue usageError
		if err := runBlocks(ctx, bo, ios); !errors.As(err, &ue) {
			t.Errorf("--active --recent: %v, want a usage error", err)
		}
	})

	t.Run("budget check", func(t *testing.T) {
		for _, c := range []struct {
			daily float64
			want  error
		}{{0.0002, errOverBudget}, {0.001, nil}} { // today: $0.0003
			ios, _, errOut := runTestIO(t, now)
			opts := &budgetOptions{reportOptions: *readerOptions(t, report.Daily, true)}
			opts.budget.Daily = c.daily
			if err := runBudgetCheck(ctx, opts, ios); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("daily budget %g: %v, want %v\n%s", c.daily, err, c.want, errOut)
			}
		}
		ios, _, _ := runTestIO(t, now)
		var ue usageError
		if err := runBudgetCheck(ctx, &budgetOptions{reportOptions: *readerOptions(t, report.Daily, true)}, ios); !errors.As(err, &ue) {
			t.Errorf("no budget: %v, want a usage error", err)
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		ios, _, errOut := runTestIO(t, now)
		page := filepath.Join(t.TempDir(), "d.html")
		opts := &dashboardOptions{reportOptions: *readerOptions(t, report.Daily, false), Out: page, Top: 5}
		if err := runDashboard(ctx, opts, ios); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(raw, []byte("<svg")) || !strings.Contains(errOut.String(), "Wrote "+page) {
			t.Errorf("page of %d bytes; stderr %q", len(raw), errOut)
		}
		opts.Top = 0
		var ue usageError
		if err := runDashboard(ctx, opts, ios); !errors.As(err, &ue) {
			t.Errorf("--top 0: %v, want a usage error", err)
		}
	})

	t.Run("statusline", func(t *testing.T) {
		ios, out, _ := runTestIO(t, now)
		opts := &statuslineOptions{reportOptions: *readerOptions(t, report.Daily, false), NoStdin: true,
			Session: "20a0c003-4e5f-4a6b-8c7d-20a000000003", Timeout: 5 * time.Second}
		if err := runStatusline(ctx, opts, ios); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSuffix(out.String(), "\n")
		for _, want := range []string{"session $0.0003", "today $0.0003", "block $0.0003, 4h00m left"} {
			if !strings.Contains(line, want) {
				t.Errorf("line %q lacks %q", line, want)
			}
		}
		// An error is the one-line marker, never an error exit.
		ios, out, _ = runTestIO(t, now)
		opts.TZ = "Not/AZone"
		if err := runStatusline(ctx, opts, ios); err != nil || !strings.HasPrefix(out.String(), "sessions-etl: ⚠") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("bad zone: %v %q", err, out)
		}
	})
}

func TestRunVersionWithoutCobra(t *testing.T) {
	ios, out, _ := runTestIO(t, time.Now())
	if err := runVersion(context.Background(), &globalOptions{JSON: true}, ios); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || len(v) == 0 {
		t.Errorf("version --json: %v %q", err, out)
	}
}
