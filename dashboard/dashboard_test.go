package dashboard

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/sessions-etl/sessions-etl/ingest"
	"github.com/sessions-etl/sessions-etl/report"
	"github.com/sessions-etl/sessions-etl/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/structure.golden (then read it before committing)")

var (
	homeOnce sync.Once
	homeDir  string
	homeErr  error
)

// synthHome generates (once per test binary) a small sample home.
func synthHome(t *testing.T) string {
	t.Helper()
	homeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dashboard-synth-")
		if err != nil {
			homeErr = err
			return
		}
		homeDir = filepath.Join(dir, "home")
		_, homeErr = synth.Generate(context.Background(), synth.Options{Out: homeDir, Sessions: 60, Seed: 11})
	})
	if homeErr != nil {
		t.Fatal(homeErr)
	}
	return homeDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if homeDir != "" {
		_ = os.RemoveAll(filepath.Dir(homeDir))
	}
	os.Exit(code)
}

var fixedNow = time.Date(2026, 3, 1, 19, 0, 0, 0, time.UTC)

// buildPage builds the dashboard of the synth home into a new database.
func buildPage(t *testing.T, edit func(*report.Options)) (*Data, string) {
	t.Helper()
	roots, err := ingest.PathRoots([]string{synthHome(t)})
	if err != nil {
		t.Fatal(err)
	}
	ro := report.Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "d.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	if edit != nil {
		edit(&ro)
	}
	d, err := Build(context.Background(), Options{Report: ro, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, d); err != nil {
		t.Fatal(err)
	}
	return d, b.String()
}

// outline is the structure of the page: elements with their id and class,
// headings' and table headers' text, the number of rows of each table, the
// charts' accessible names — not the charts' drawing or the numbers.
func outline(t *testing.T, doc string) string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	text := func(n *html.Node) string {
		var s strings.Builder
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.TextNode {
				s.WriteString(n.Data)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(n)
		return strings.Join(strings.Fields(s.String()), " ")
	}
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if n.Type != html.ElementNode {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, depth)
			}
			return
		}
		line := strings.Repeat("  ", depth) + n.Data
		if id := attr(n, "id"); id != "" {
			line += "#" + id
		}
		if cl := attr(n, "class"); cl != "" {
			line += "." + strings.ReplaceAll(cl, " ", ".")
		}
		switch n.Data {
		case "h1", "h2", "th", "title":
			line += " " + strconvQuote(text(n))
		case "svg":
			fmt.Fprintf(&b, "%s aria-label=%q\n", line, attr(n, "aria-label"))
			return // the drawing is gonum/plot's, not structure
		case "tbody":
			rows := 0
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "tr" {
					rows++
				}
			}
			fmt.Fprintf(&b, "%s rows=%d\n", line, rows)
			if attr(n.Parent, "class") == "totals" {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, depth+1)
				}
			}
			return
		case "style":
			fmt.Fprintf(&b, "%s\n", line)
			return
		case "td", "tr", "code", "strong", "meta":
			if n.Data != "tr" {
				return
			}
		}
		if n.Data != "tr" {
			b.WriteString(line + "\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	return b.String()
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// TestStructureGolden: the page's structure over a fixed home and clock.
func TestStructureGolden(t *testing.T) {
	_, doc := buildPage(t, nil)
	got := outline(t, doc)
	golden := filepath.Join("testdata", "structure.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("structure (-golden +got):\n%s", d)
	}
}

// remote matches anything a browser could fetch: an absolute or
// protocol-relative URL anywhere, an src/href/srcset/action attribute, a
// CSS url() or @import, a script or link element.
var remote = regexp.MustCompile(`(?i)https?://|["'(=\s]//[a-z0-9]|\b(src|href|srcset|action|xlink:href)\s*=|url\s*\(|@import|<script|<link|<iframe|<object|<embed|<img`)

// TestNoNetwork: the page loads nothing: no URL of any kind, no element or
// CSS rule that fetches, no script.
func TestNoNetwork(t *testing.T) {
	_, doc := buildPage(t, nil)
	if m := remote.FindAllStringIndex(doc, 5); m != nil {
		for _, ix := range m {
			lo, hi := max(ix[0]-60, 0), min(ix[1]+60, len(doc))
			t.Errorf("page refers to something to fetch: …%s…", doc[lo:hi])
		}
	}
	if n := strings.Count(doc, `<svg class="chart"`); n < 6 {
		t.Errorf("%d charts, want 6", n)
	}
	// The pattern does catch what it is meant to.
	for _, bad := range []string{`<img src="x.png">`, `<a href="//cdn.example/x">`, `style="background:url(a.png)"`,
		`<script>1</script>`, `@import "x.css";`, `see https://example.com`} {
		if !remote.MatchString(bad) {
			t.Errorf("pattern misses %q", bad)
		}
	}
}

// TestSameTotals: the page's total is the daily report's (the same counted
// usage, the same spelling), the period and zone are shown, and the
// filters apply: a project's page totals that project's report.
func TestSameTotals(t *testing.T) {
	d, doc := buildPage(t, func(o *report.Options) { o.Location = mustLoc(t, "Europe/Paris") })
	roots, err := ingest.PathRoots([]string{synthHome(t)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Run(context.Background(), report.Options{Kind: report.Daily, Roots: roots,
		DBPath: filepath.Join(t.TempDir(), "r.duckdb"), Managed: true, Workers: 2, Location: mustLoc(t, "Europe/Paris")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := textByID(t, doc, "total-cost"), report.CostText(r.Totals); got != want {
		t.Errorf("page total %q, report total %q", got, want)
	}
	if d.Daily.Totals.Tokens != r.Totals.Tokens {
		t.Errorf("tokens %+v, report %+v", d.Daily.Totals.Tokens, r.Totals.Tokens)
	}
	if !strings.Contains(doc, "time zone <strong>Europe/Paris</strong>") {
		t.Error("page does not name the zone")
	}
	if r.Totals.Unpriced.Records > 0 && !strings.Contains(doc, `id="unpriced"`) {
		t.Error("unpriced usage not called out")
	}
	proj := d.Projects.Rows[0].Key
	pd, pdoc := buildPage(t, func(o *report.Options) { o.Project = proj; o.Since = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC) })
	pr, err := report.Run(context.Background(), report.Options{Kind: report.Daily, Roots: roots, DBPath: filepath.Join(t.TempDir(), "p.duckdb"),
		Managed: true, Workers: 2, Location: time.UTC, Project: proj, Since: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if pd.Daily.Totals.Tokens != pr.Totals.Tokens || textByID(t, pdoc, "total-cost") != report.CostText(pr.Totals) ||
		len(pd.Projects.Rows) != 1 || !strings.Contains(pdoc, "Period: <strong>2025-06-01 to ") {
		t.Errorf("--project %s --since 2025-06-01: page totals %+v, report %+v", proj, pd.Daily.Totals.Tokens, pr.Totals.Tokens)
	}
}

// textByID is the text of the element with that id ("" when none).
func textByID(t *testing.T, doc, id string) string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var found *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				found = n
			}
		}
		for c := n.FirstChild; c != nil && found == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(root)
	if found == nil {
		return ""
	}
	var s strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			s.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(found)
	return strings.TrimSpace(s.String())
}

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestSessionsWithSubagents: the top sessions list each parent by its cost
// with its subagents and shows the subagent under it (c24: the child's
// two records, $0.00735, under a parent of $0.0102 own, $0.01755 with it;
// the other parent's roll-up names a child not in the scan and counts, so
// it has no total with subagents, as in `report session`).
func TestSessionsWithSubagents(t *testing.T) {
	roots, err := ingest.PathRoots([]string{filepath.Join("..", "testdata", "cases", "c24-subagent-rollup")})
	if err != nil {
		t.Fatal(err)
	}
	ro := report.Options{Roots: roots, DBPath: filepath.Join(t.TempDir(), "s.duckdb"), Managed: true, Workers: 2, Location: time.UTC}
	d, err := Build(context.Background(), Options{Report: ro, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	tb := d.sessionTable()
	var got []string
	for _, r := range tb.Rows {
		got = append(got, strings.Join([]string{r.Cells[0], r.Cells[5], r.Cells[6], r.Cells[7]}, " | "))
	}
	want := []string{
		"24a0c001-4e5…" + " | 2 | $0.0102 | $0.0175",        // $0.01755
		"\u00a0\u00a0↳ 24a0c0c1-4e5…" + " | 2 | $0.0073 | ", // $0.00735 as report prints it
		"24a0c002-4e5…" + " | 3 | $0.0121 | ",               // no subagent in the scan: no second total

	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("top sessions (-want +got):\n%s", d)
	}
}
