package ingest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiscoverLinkToAncestorOfRoot (finding 2): a directory link to an
// ancestor of the root (here the directory above it; `x -> /` is the same
// case) leads back over the root: it is a symlink_cycle, not a walk of
// everything above.
func TestDiscoverLinkToAncestorOfRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "home", "sessions")
	writeFile(t, filepath.Join(root, "a.jsonl"), "{}\n")
	writeFile(t, filepath.Join(base, "home", "other", "outside.jsonl"), "{}\n")
	writeFile(t, filepath.Join(base, "elsewhere.jsonl"), "{}\n")
	must(t, os.Symlink(base, filepath.Join(root, "up")))
	must(t, os.Symlink(filepath.Join(base, "home"), filepath.Join(root, "home-link")))
	must(t, os.Symlink("/", filepath.Join(root, "slash")))
	files, issues := discover(t, []Root{{Path: root, Recursive: true}})
	if len(files) != 1 || files[0].Path != filepath.Join(root, "a.jsonl") {
		t.Errorf("files %+v, want only a.jsonl", files)
	}
	cycles := map[string]bool{}
	for _, pi := range issues {
		if pi.Issue.Code == CodeSymlinkCycle {
			cycles[filepath.Base(pi.Path)] = true
		}
	}
	for _, name := range []string{"up", "home-link", "slash"} {
		if !cycles[name] {
			t.Errorf("%s: no symlink_cycle (issues %+v)", name, issues)
		}
	}
}

// TestDiscoverConfined: with Confine (writing commands), a directory link
// out of the root is reported and not followed; without it (readers) it is
// followed as before.
func TestDiscoverConfined(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "sessions")
	writeFile(t, filepath.Join(root, "a.jsonl"), "{}\n")
	writeFile(t, filepath.Join(root, "inner", "b.jsonl"), "{}\n")
	writeFile(t, filepath.Join(base, "other-user", "c.jsonl"), "{}\n")
	must(t, os.Symlink(filepath.Join(base, "other-user"), filepath.Join(root, "out")))
	must(t, os.Symlink(filepath.Join(root, "inner"), filepath.Join(root, "in")))

	files, issues := discover(t, []Root{{Path: root, Recursive: true, Confine: true}})
	if len(files) != 2 {
		t.Errorf("confined: files %+v, want a.jsonl and inner/b.jsonl", files)
	}
	found := false
	for _, pi := range issues {
		if pi.Issue.Code == CodeLinkOutsideRoot && pi.Path == filepath.Join(root, "out") {
			found = true
		}
	}
	if !found {
		t.Errorf("confined: no link_outside_root issue for out (issues %+v)", issues)
	}
	files, _ = discover(t, []Root{{Path: root, Recursive: true}})
	if len(files) != 3 {
		t.Errorf("reader: files %+v, want 3 (the link followed)", files)
	}
}
