package synth

import (
	"encoding/base64"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// blob is a large piece of realistic text, stored already JSON-escaped, with
// the offsets where its lines start. Slicing between two line starts always
// gives valid JSON string content, so tool outputs of any size are a copy of
// a slice, not per-byte work.
type blob struct {
	esc    []byte
	starts []int // offsets in esc of line starts; starts[0] = 0
}

func newBlob(raw string) *blob {
	bl := &blob{esc: make([]byte, 0, len(raw)+len(raw)/8)}
	bl.starts = append(bl.starts, 0)
	lines := strings.SplitAfter(raw, "\n")
	for _, ln := range lines {
		if ln == "" {
			continue
		}
		bl.esc = appendEscaped(bl.esc, ln)
		if strings.HasSuffix(ln, "\n") {
			bl.starts = append(bl.starts, len(bl.esc))
		}
	}
	// The last start is the end of the blob; drop it as a start.
	if bl.starts[len(bl.starts)-1] == len(bl.esc) {
		bl.starts = bl.starts[:len(bl.starts)-1]
	}
	return bl
}

// appendSlice appends about size bytes of escaped text (whole lines; at
// least one line), starting at a random line and wrapping around.
func (bl *blob) appendSlice(b []byte, r *rng, size int64) []byte {
	if size <= 0 || len(bl.starts) == 0 {
		return b
	}
	from := bl.starts[r.intn(len(bl.starts))]
	for size > 0 {
		want := int64(from) + size
		if want >= int64(len(bl.esc)) {
			b = append(b, bl.esc[from:]...)
			size -= int64(len(bl.esc) - from)
			from = 0
			continue
		}
		i := sort.SearchInts(bl.starts, int(want))
		end := len(bl.esc)
		if i < len(bl.starts) {
			end = bl.starts[i]
		}
		b = append(b, bl.esc[from:end]...)
		break
	}
	return b
}

// corpus holds everything precomputed once per process.
type corpus struct {
	code, shell, grep *blob
	image             []byte // base64 of a PNG-like byte stream
}

var (
	corpusOnce sync.Once
	theCorpus  *corpus
)

func getCorpus() *corpus {
	corpusOnce.Do(func() { theCorpus = buildCorpus() })
	return theCorpus
}

const (
	codeBlobSize  = 3 << 20
	shellBlobSize = 2 << 20
	grepBlobSize  = 1 << 20
	imageBlobSize = 6 << 20 // base64 characters
)

func buildCorpus() *corpus {
	r := newRNG(0x5e55_10e7_c0de)
	c := &corpus{}
	var sb strings.Builder
	for sb.Len() < codeBlobSize {
		writeCodeFile(&sb, r)
	}
	c.code = newBlob(sb.String())
	sb.Reset()
	for sb.Len() < shellBlobSize {
		writeShellOutput(&sb, r)
	}
	c.shell = newBlob(sb.String())
	sb.Reset()
	for sb.Len() < grepBlobSize {
		writeGrepOutput(&sb, r)
	}
	c.grep = newBlob(sb.String())

	raw := make([]byte, imageBlobSize/4*3)
	// A PNG signature and IHDR so the data looks like a real screenshot.
	hdr := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x07\x80\x00\x00\x04\x38\x08\x06\x00\x00\x00")
	copy(raw, hdr)
	for i := len(hdr); i+8 <= len(raw); i += 8 {
		x := r.next()
		for k := 0; k < 8; k++ {
			raw[i+k] = byte(x >> (8 * k))
		}
	}
	c.image = make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(c.image, raw)
	return c
}

var (
	idents   = []string{"user", "session", "order", "invoice", "token", "cache", "config", "handler", "router", "payment", "report", "metrics", "queue", "worker", "parser", "schema", "account", "upload", "webhook", "tenant", "billing", "search", "index", "event", "audit", "client", "retry", "limiter", "export", "job"}
	goTypes  = []string{"string", "int", "int64", "bool", "[]byte", "time.Time", "map[string]string", "*Config", "error", "[]string"}
	tsTypes  = []string{"string", "number", "boolean", "Date", "string[]", "Record<string, unknown>", "Promise<void>", "User | null"}
	dirs     = []string{"src", "internal", "pkg", "lib", "app", "cmd", "tests", "scripts", "web/src", "server"}
	exts     = []string{".go", ".ts", ".tsx", ".py", ".go", ".ts"}
	projects = []string{"webapp", "api-server", "infra", "ml-pipeline", "cli-tool", "docs-site", "payments", "mobile-app"}
)

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func randPath(r *rng) string {
	return pick(r, dirs) + "/" + pick(r, idents) + "/" + pick(r, idents) + pick(r, exts)
}

func writeCodeFile(sb *strings.Builder, r *rng) {
	a, b := pick(r, idents), pick(r, idents)
	switch r.intn(3) {
	case 0: // Go
		sb.WriteString("package " + a + "\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"strings\"\n\t\"time\"\n)\n\n")
		sb.WriteString("// " + title(b) + "Store keeps " + b + " records — one per tenant.\n")
		sb.WriteString("type " + title(b) + "Store struct {\n")
		for i := r.btw(2, 7); i > 0; i-- {
			sb.WriteString("\t" + pick(r, idents) + strconv.Itoa(i) + " " + pick(r, goTypes) + "\n")
		}
		sb.WriteString("}\n\n")
		for i := r.btw(2, 6); i > 0; i-- {
			f := title(pick(r, idents)) + title(pick(r, idents))
			sb.WriteString("// " + f + " returns the " + pick(r, idents) + " for id, or ErrNotFound.\n")
			sb.WriteString("func (s *" + title(b) + "Store) " + f + "(ctx context.Context, id string) (*" + title(a) + ", error) {\n")
			sb.WriteString("\tif id == \"\" {\n\t\treturn nil, errors.New(\"" + a + ": empty id\")\n\t}\n")
			sb.WriteString("\tctx, cancel := context.WithTimeout(ctx, " + strconv.Itoa(r.btw(1, 30)) + "*time.Second)\n\tdefer cancel()\n")
			sb.WriteString("\trow := s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM " + b + "s WHERE id = $1`, id)\n")
			sb.WriteString("\tvar out " + title(a) + "\n\tif err := row.Scan(&out.ID, &out.Name, &out.CreatedAt); err != nil {\n")
			sb.WriteString("\t\treturn nil, fmt.Errorf(\"scan " + b + " %q: %w\", id, err)\n\t}\n")
			sb.WriteString("\tout.Name = strings.TrimSpace(strings.ReplaceAll(out.Name, \"\\t\", \" \"))\n")
			sb.WriteString("\tlog.Printf(\"loaded %s in %v\\n\", id, time.Since(start))\n\treturn &out, nil\n}\n\n")
		}
	case 1: // TypeScript
		sb.WriteString("import { z } from \"zod\";\nimport type { Request, Response } from \"express\";\nimport { " + a + "Service } from \"../services/" + a + "\";\n\n")
		sb.WriteString("const " + b + "Schema = z.object({\n")
		for i := r.btw(2, 6); i > 0; i-- {
			sb.WriteString("  " + pick(r, idents) + ": z.string().min(" + strconv.Itoa(r.btw(1, 9)) + "),\n")
		}
		sb.WriteString("});\n\nexport type " + title(b) + " = z.infer<typeof " + b + "Schema>;\n\n")
		for i := r.btw(2, 5); i > 0; i-- {
			f := pick(r, idents) + title(pick(r, idents))
			sb.WriteString("export async function " + f + "(req: Request, res: Response): " + pick(r, tsTypes) + " {\n")
			sb.WriteString("  const parsed = " + b + "Schema.safeParse(req.body);\n  if (!parsed.success) {\n")
			sb.WriteString("    return res.status(400).json({ error: \"invalid " + b + "\", issues: parsed.error.issues });\n  }\n")
			sb.WriteString("  // Matches ids like \"usr_123\" — see docs/ids.md\n  const re = /^[a-z]+_\\d+$/;\n")
			sb.WriteString("  const result = await " + a + "Service." + f + "(parsed.data, { retries: " + strconv.Itoa(r.btw(0, 5)) + " });\n")
			sb.WriteString("  console.log(`" + f + " took ${Date.now() - start}ms for \"${req.params.id}\"`);\n  return res.json(result);\n}\n\n")
		}
	default: // Python
		sb.WriteString("from __future__ import annotations\n\nimport json\nimport logging\nfrom dataclasses import dataclass\n\nlog = logging.getLogger(__name__)\n\n\n")
		sb.WriteString("@dataclass\nclass " + title(a) + title(b) + ":\n")
		for i := r.btw(2, 6); i > 0; i-- {
			sb.WriteString("    " + pick(r, idents) + ": str = \"\"\n")
		}
		sb.WriteString("\n")
		for i := r.btw(2, 5); i > 0; i-- {
			f := pick(r, idents) + "_" + pick(r, idents)
			sb.WriteString("    def " + f + "(self, path: str = \"data/" + b + ".json\") -> dict:\n")
			sb.WriteString("        \"\"\"Load the " + b + " file and return it as a dict.\"\"\"\n")
			sb.WriteString("        with open(path, encoding=\"utf-8\") as fh:\n            data = json.load(fh)\n")
			sb.WriteString("        log.info(\"loaded %d rows from %s\\n\", len(data), path)\n")
			sb.WriteString("        return {k: v for k, v in data.items() if not k.startswith(\"_\")}\n\n")
		}
	}
}

func writeShellOutput(sb *strings.Builder, r *rng) {
	a := pick(r, idents)
	switch r.intn(8) {
	case 0: // go test -v
		for i := r.btw(3, 20); i > 0; i-- {
			name := "Test" + title(pick(r, idents)) + title(pick(r, idents))
			sb.WriteString("=== RUN   " + name + "\n")
			if r.pct(15) {
				sb.WriteString("    " + a + "_test.go:" + strconv.Itoa(r.btw(10, 400)) + ": got \"" + pick(r, idents) + "\", want \"" + pick(r, idents) + "\"\n")
				sb.WriteString("--- FAIL: " + name + " (0." + strconv.Itoa(r.btw(10, 99)) + "s)\n")
			} else {
				sb.WriteString("--- PASS: " + name + " (0.0" + strconv.Itoa(r.btw(0, 9)) + "s)\n")
			}
		}
		sb.WriteString("ok  \tgithub.com/acme/" + pick(r, projects) + "/internal/" + a + "\t" + strconv.Itoa(r.btw(0, 9)) + "." + strconv.Itoa(r.btw(100, 999)) + "s\n")
	case 1: // vitest with ANSI colours
		sb.WriteString("\x1b[1m\x1b[46m RUN \x1b[49m\x1b[22m \x1b[36mv1.6.0 \x1b[39m\x1b[90m/home/dev/" + pick(r, projects) + "\x1b[39m\n\n")
		for i := r.btw(3, 15); i > 0; i-- {
			sb.WriteString(" \x1b[32m✓\x1b[39m src/" + pick(r, idents) + ".test.ts \x1b[2m(" + strconv.Itoa(r.btw(1, 40)) + " tests)\x1b[22m\x1b[90m " + strconv.Itoa(r.btw(5, 900)) + "ms\x1b[39m\n")
		}
		sb.WriteString("\n\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[32m" + strconv.Itoa(r.btw(3, 40)) + " passed\x1b[39m\x1b[22m\n")
	case 2: // git log
		for i := r.btw(3, 12); i > 0; i-- {
			sb.WriteString("commit " + randHex(r, 40) + "\nAuthor: Dev <dev@example.com>\nDate:   Mon Sep " + strconv.Itoa(r.btw(1, 28)) + " 1" + strconv.Itoa(r.btw(0, 9)) + ":2" + strconv.Itoa(r.btw(0, 9)) + ":11 2025 +0200\n\n    " + title(pick(r, idents)) + ": fix \"" + pick(r, idents) + "\" handling in " + randPath(r) + "\n\n")
		}
	case 3: // git diff
		p := randPath(r)
		sb.WriteString("diff --git a/" + p + " b/" + p + "\nindex " + randHex(r, 7) + ".." + randHex(r, 7) + " 100644\n--- a/" + p + "\n+++ b/" + p + "\n@@ -" + strconv.Itoa(r.btw(1, 300)) + ",7 +" + strconv.Itoa(r.btw(1, 300)) + ",9 @@\n")
		for i := r.btw(4, 18); i > 0; i-- {
			sign := pick(r, []string{" ", " ", "+", "-"})
			sb.WriteString(sign + "\tif err := s." + pick(r, idents) + "(ctx, \"" + pick(r, idents) + "\"); err != nil {\n")
		}
	case 4: // tsc errors
		for i := r.btw(1, 8); i > 0; i-- {
			sb.WriteString("src/" + pick(r, idents) + "/" + pick(r, idents) + ".ts(" + strconv.Itoa(r.btw(1, 300)) + "," + strconv.Itoa(r.btw(1, 40)) + "): error TS2322: Type '\"" + pick(r, idents) + "\"' is not assignable to type 'number'.\n")
		}
		sb.WriteString("\nFound " + strconv.Itoa(r.btw(1, 8)) + " errors in " + strconv.Itoa(r.btw(1, 4)) + " files.\n")
	case 5: // Python traceback
		sb.WriteString("Traceback (most recent call last):\n")
		for i := r.btw(2, 6); i > 0; i-- {
			sb.WriteString("  File \"/home/dev/ml-pipeline/" + pick(r, idents) + "/" + pick(r, idents) + ".py\", line " + strconv.Itoa(r.btw(5, 500)) + ", in " + pick(r, idents) + "\n    result = self." + pick(r, idents) + "(batch[\"" + pick(r, idents) + "\"])\n")
		}
		sb.WriteString("KeyError: '" + a + "'\n")
	case 6: // curl JSON
		sb.WriteString("{\"status\":\"ok\",\"" + a + "s\":[")
		for i := r.btw(1, 6); i > 0; i-- {
			sb.WriteString("{\"id\":\"" + randHex(r, 12) + "\",\"name\":\"" + pick(r, idents) + " \\\"beta\\\"\",\"path\":\"C:\\\\Users\\\\dev\\\\" + pick(r, idents) + "\"},")
		}
		sb.WriteString("{}],\"took_ms\":" + strconv.Itoa(r.btw(1, 900)) + "}\n")
	default: // ls -la
		sb.WriteString("total " + strconv.Itoa(r.btw(8, 400)) + "\n")
		for i := r.btw(3, 16); i > 0; i-- {
			sb.WriteString("-rw-r--r--  1 dev  staff  " + strconv.Itoa(r.btw(100, 90000)) + " Sep " + strconv.Itoa(r.btw(1, 28)) + " 1" + strconv.Itoa(r.btw(0, 9)) + ":0" + strconv.Itoa(r.btw(0, 9)) + " " + pick(r, idents) + pick(r, exts) + "\n")
		}
	}
}

func writeGrepOutput(sb *strings.Builder, r *rng) {
	for i := r.btw(2, 20); i > 0; i-- {
		sb.WriteString(randPath(r) + ":" + strconv.Itoa(r.btw(1, 900)) + ":\t" + pick(r, []string{
			"if err := s." + pick(r, idents) + "(ctx); err != nil {",
			"const " + pick(r, idents) + " = await fetch(`/api/" + pick(r, idents) + "`);",
			"log.Printf(\"" + pick(r, idents) + ": %v\\n\", err)",
			"// TODO(dev): handle the \"" + pick(r, idents) + "\" case",
			"def " + pick(r, idents) + "_" + pick(r, idents) + "(self):",
			"return { ok: false, error: \"" + pick(r, idents) + " not found\" };",
		}) + "\n")
	}
}

// Prose pools for prompts, answers, thinking and summaries.
var (
	userPrompts = []string{
		"Can you look at {file} and figure out why the {thing} tests are failing?",
		"Add a retry with exponential backoff to the {thing} client.",
		"Refactor {file} so the {thing} logic is testable without a database.",
		"Why does `npm run build` fail with \"Cannot find module './{thing}'\"?",
		"The {thing} endpoint returns 500 when the body is empty. Fix it and add a test.",
		"Rename {thing}Service to {thing2}Service everywhere, keep the public API.",
		"Write a migration that adds a `{thing}_id` column to the {thing2}s table.",
		"Here is the error I get:\n\n```\npanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation]\n\ngoroutine 1 [running]:\nmain.{thing}()\n\t/home/dev/{project}/{file}:42\n```\n\nWhat is going on?",
		"Summarise what {file} does, then suggest two simplifications.",
		"Run the linter and fix whatever it reports in {file}.",
		"continue",
		"ok, do it",
		"Make the {thing} cache expire after 10 minutes instead of 1 hour.",
		"Explain the difference between the {thing} and {thing2} modules — they look duplicated.",
		"Update the README section \"{thing}\" to match the new CLI flags.",
		"Can you check the CI logs? The job \"test ({thing})\" is red since yesterday.",
		"Port {file} from callbacks to async/await.",
		"The dashboard shows NaN for {thing} totals when there is no data.",
	}
	answerLines = []string{
		"I'll start by reading `{file}` to understand the current structure.",
		"The failure comes from the {thing} fixture: it is created once per package, so the second test sees stale state.",
		"I changed the handler to validate the body before calling the {thing} service, and added a table-driven test.",
		"All tests pass now (`go test ./...` and `npm test`).",
		"Here is what changed:\n\n- `{file}`: the {thing} lookup now returns a typed error\n- `{file2}`: callers handle `ErrNotFound` explicitly\n- tests cover the empty-body case",
		"The root cause is a race between the {thing} worker and the shutdown hook; the fix waits for the worker before closing the pool.",
		"I couldn't reproduce the failure locally; the CI log shows a timeout talking to the {thing} mock, which points to the 2s deadline.",
		"```ts\nexport function parse{Thing}(raw: string): {Thing} {\n  const data = JSON.parse(raw);\n  if (!data.id) throw new Error(\"missing id\");\n  return data as {Thing};\n}\n```",
		"```go\nif errors.Is(err, sql.ErrNoRows) {\n\treturn nil, fmt.Errorf(\"{thing} %q: %w\", id, ErrNotFound)\n}\n```",
		"Next I'd suggest splitting `{file}` — it mixes HTTP handling and persistence.",
		"Done. I also removed the unused `{thing}Helper` that the linter flagged.",
		"Note: the migration is not reversible because the old column held free text.",
	}
	thinkingLines = []string{
		"The user wants the {thing} behaviour changed. Let me look at how {file} wires it first.",
		"The stack trace points at a nil map. Probably the config is not loaded when {thing} starts.",
		"I should run the tests before editing so I know the baseline.",
		"There are two call sites of {thing}; both pass a context, so adding a timeout is safe.",
		"The grep output shows the old name is still used in the templates — those need updating too.",
		"Hmm, the error says \"Cannot find module\". The import path uses a capital letter but the file is lowercase.",
		"Let me check whether the tests use a real database or the in-memory fake.",
	}
	summaryLines = []string{
		"Fixed {thing} test flakiness caused by shared fixtures",
		"Added retries with backoff to the {thing} client",
		"Refactored {file} and documented the {thing} flow",
		"Investigated CI failure in {thing}; raised timeout and added logging",
		"Renamed {thing}Service and updated imports",
	}
	sessionNames = []string{"Fix flaky {thing} tests", "Refactor {thing} module", "{Thing} retry logic", "CI: {thing} job", "Migration for {thing}s", "Investigate {thing} 500s"}
	systemPrompt = "You are an expert coding assistant operating inside a terminal. You help users by reading files, executing commands, editing code, and writing new files.\n\nAvailable tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make surgical edits to files (find exact text and replace)\n- write: Create or overwrite files\n\nGuidelines:\n- Use bash for file operations like ls, rg, find\n- Use read to examine files before editing. You must use this tool instead of cat or sed.\n- Use edit for precise changes (old text must match exactly)\n- Be concise in your responses\n- Show file paths clearly when working with files\n"
)

// fill replaces the placeholders of a prose template ({file}, {thing}, …).
func fill(r *rng, tmpl, project string) string {
	i := strings.IndexByte(tmpl, '{')
	if i < 0 {
		return tmpl
	}
	thing := pick(r, idents)
	var sb strings.Builder
	sb.Grow(len(tmpl) + 32)
	for i >= 0 {
		sb.WriteString(tmpl[:i])
		tmpl = tmpl[i:]
		j := strings.IndexByte(tmpl, '}')
		if j < 0 {
			break
		}
		switch tmpl[:j+1] {
		case "{file}", "{file2}":
			sb.WriteString(randPath(r))
		case "{thing}":
			sb.WriteString(thing)
		case "{Thing}":
			sb.WriteString(title(thing))
		case "{thing2}":
			sb.WriteString(pick(r, idents))
		case "{project}":
			sb.WriteString(project)
		default: // a literal brace (code in a template)
			sb.WriteByte('{')
			tmpl = tmpl[1:]
			i = strings.IndexByte(tmpl, '{')
			continue
		}
		tmpl = tmpl[j+1:]
		i = strings.IndexByte(tmpl, '{')
	}
	sb.WriteString(tmpl)
	return sb.String()
}

// prose joins random lines from pool until about n bytes.
func prose(r *rng, pool []string, n int, project string, sep string) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(fill(r, pick(r, pool), project))
	}
	return sb.String()
}
