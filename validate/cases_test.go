package validate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessions-etl/sessions-etl/ingest"
)

// caseAliases maps the role names some expected.json files use to the file
// they mean.
var caseAliases = map[string]map[string]string{
	"c07-early-v4-and-fork-counted-once": {
		"parent": "home/.pi/agent/sessions/--home-dev-proj--/2025-05-01T12-00-00-000Z_5f0c8a52-1b7e-4c1e-9a0e-0b6d2f9a1c01.jsonl",
		"fork":   "home/.pi/agent/sessions/--home-dev-proj--/2025-05-02T08-00-00-000Z_7a3e1d90-2c4b-4f7d-8e21-3c5b9f0d2e02.jsonl",
	},
}

type expectedVerdict struct {
	Status          string   `json:"status"`
	Codes           []string `json:"codes"`
	CodesAbsent     []string `json:"codes_absent"`
	Line            int      `json:"line"`
	FormatVersion   *int     `json:"format_version"`
	EarlyV4         *bool    `json:"early_v4"`
	Entries         *int     `json:"entries"`
	Severity        string   `json:"severity"`
	SeverityOfCodes string   `json:"severity_of_codes"`
}

// TestSharedCases asserts the "validate" part of every case in
// testdata/cases (copied from ../shared/cases): status, the exact set of
// issue codes, the line of the first listed code, version facts.
func TestSharedCases(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/cases/c*")
	if err != nil || len(dirs) < 19 {
		t.Fatalf("cases: %v (%d found)", err, len(dirs))
	}
	checked := 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Validate map[string]expectedVerdict `json:"validate"`
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for key, want := range exp.Validate {
			rel := key
			if a, ok := caseAliases[name][key]; ok {
				rel = a
			}
			t.Run(name+"/"+key, func(t *testing.T) {
				res, err := File(context.Background(), &ingest.Reader{MaxDepth: 1}, NewChecker(), filepath.Join(dir, rel))
				if err != nil {
					t.Fatal(err)
				}
				if want.Status == string(StatusSkipped) {
					// Passed over by discovery (not_a_session_file): the
					// verdict of the case directory given as PATH.
					res = discoveredVerdict(t, dir, filepath.Join(dir, rel))
				}
				checked++
				if string(res.Status) != want.Status {
					t.Errorf("status = %s, want %s (issues %v)", res.Status, want.Status, res.Issues)
				}
				var codes []string
				for _, is := range res.Issues {
					if !slices.Contains(codes, is.Code) {
						codes = append(codes, is.Code)
					}
				}
				if want.Codes != nil {
					got, exp := slices.Clone(codes), slices.Clone(want.Codes)
					slices.Sort(got)
					slices.Sort(exp)
					if !slices.Equal(got, exp) {
						t.Errorf("codes = %v, want %v", codes, want.Codes)
					}
				}
				for _, c := range want.CodesAbsent {
					if slices.Contains(codes, c) {
						t.Errorf("code %s present, want absent", c)
					}
				}
				if want.Line > 0 && len(want.Codes) > 0 {
					line := -1
					for _, is := range res.Issues {
						if is.Code == want.Codes[0] {
							line = is.Line
							break
						}
					}
					if line != want.Line {
						t.Errorf("%s at line %d, want %d", want.Codes[0], line, want.Line)
					}
				}
				sev := want.Severity
				if sev == "" {
					sev = want.SeverityOfCodes
				}
				if sev != "" {
					for _, is := range res.Issues {
						if slices.Contains(want.Codes, is.Code) && string(is.Severity) != sev {
							t.Errorf("%s has severity %s, want %s", is.Code, is.Severity, sev)
						}
					}
				}
				if want.FormatVersion != nil && res.FormatVersion != *want.FormatVersion {
					t.Errorf("format_version = %d, want %d", res.FormatVersion, *want.FormatVersion)
				}
				if want.EarlyV4 != nil && res.EarlyV4 != *want.EarlyV4 {
					t.Errorf("early_v4 = %v, want %v", res.EarlyV4, *want.EarlyV4)
				}
				if want.Entries != nil && res.Entries != *want.Entries {
					t.Errorf("entries = %d, want %d", res.Entries, *want.Entries)
				}
			})
		}
	}
	if checked < 25 {
		t.Errorf("only %d verdicts checked", checked)
	}
}

// discoveredVerdict validates the directory dir as a PATH and returns the
// result of the file path in it.
func discoveredVerdict(t *testing.T, dir, path string) Result {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Abs(path)
	var got *Result
	_, err = Run(context.Background(), Options{Roots: []ingest.Root{{Path: abs, Recursive: true}}, Workers: 1}, func(fr FileResult) error {
		if fr.File.Path == want {
			r := fr.Result
			got = &r
		}
		return nil
	})
	if err != nil || got == nil {
		t.Fatalf("validate %s: %v; no verdict for %s", dir, err, path)
	}
	return *got
}
