package migrate

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// posixACL encodes an access ACL as Linux stores it in
// system.posix_acl_access: owner rw, user 65534 r, group r, mask r,
// others nothing.
func posixACL() []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint32(2))
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, 65534}, {0x04, 4, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		binary.Write(&b, binary.LittleEndian, e)
	}
	return b.Bytes()
}

// TestRewriteKeepsSpecialBitsAndXattrs (finding 9): a rewrite keeps the
// setgid and sticky bits and every extended attribute, the access ACL
// included (dropping it can widen who may read a session).
func TestRewriteKeepsSpecialBitsAndXattrs(t *testing.T) {
	root := copyTree(t, filepath.Join(casesDir, "c06-v2-hook-message"))
	p := filepath.Join(root, "session.jsonl")
	if err := os.Chmod(p, 0o640|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"user.sessions-etl-test": []byte("kept")}
	if err := unix.Setxattr(p, "user.sessions-etl-test", want["user.sessions-etl-test"], 0); err != nil {
		t.Fatalf("user xattr: %v (the test directory's file system must support them)", err)
	}
	if os.Getuid() == 0 {
		acl := posixACL()
		if err := unix.Setxattr(p, "system.posix_acl_access", acl, 0); err != nil {
			t.Fatalf("set ACL: %v", err)
		}
		want["system.posix_acl_access"] = acl
	} else {
		t.Log("not root: the ACL part of this test needs a file system mounted with ACLs; checking user xattrs and mode bits only")
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	modeBefore := fi.Mode()
	out := runMigrate(t, root, nil)
	if r := out.results["session.jsonl"]; r.Result != ResultUpgraded {
		t.Fatalf("%+v", r)
	}
	fi, err = os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != modeBefore {
		t.Errorf("mode %v, want %v", fi.Mode(), modeBefore)
	}
	for name, val := range want {
		buf := make([]byte, 1024)
		n, err := unix.Getxattr(p, name, buf)
		if err != nil || !bytes.Equal(buf[:n], val) {
			t.Errorf("%s after the rewrite: %x %v, want %x", name, buf[:max(n, 0)], err, val)
		}
	}
}
