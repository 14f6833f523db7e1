package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	rmHdr = `{"type":"session","version":3,"id":"s","timestamp":"2025-06-01T10:00:00.000Z","cwd":"/w"}` + "\n"
	rmE1  = `{"type":"message","id":"e1","parentId":null,"timestamp":"2025-09-01T10:00:01.000Z","message":{"role":"user","content":"a"}}`
)

// TestNoBackupRepairSaysNotKept: with --no-backup a removed fragment is not
// said to be kept in a backup.
func TestNoBackupRepairSaysNotKept(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.jsonl"), []byte(rmHdr+rmE1+"\n"+`{"type":"message","id":"e2"`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runMigrate(t, root, func(o *Options) { o.Repair, o.Backup = true, false })
	r := out.results["a.jsonl"]
	if r.Result != ResultUpgraded || len(r.Repairs) != 1 || strings.Contains(r.Repairs[0].What, "kept in the backup") ||
		!strings.Contains(r.Repairs[0].What, "not kept") {
		t.Errorf("%+v", r)
	}
}
