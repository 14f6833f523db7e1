package migrate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// startID is Prime Agent's processStartId of pid on Linux: "proc:" and
// field 22 (starttime) of /proc/<pid>/stat.
func startID(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return "proc:" + f[19]
}

func writeLease(t *testing.T, agentDir, session string, pid int, start string) {
	t.Helper()
	real, err := filepath.EvalSymlinks(session)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(real))
	dir := filepath.Join(agentDir, "session-leases", hex.EncodeToString(sum[:])+".lock")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"pid": pid, "processStartId": start, "sessionPath": real})
	if err := os.WriteFile(filepath.Join(dir, "owner.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPrimeLeaseHonoured (finding 12): a session whose Prime Agent lease
// names a running process (same pid, same start id) is in use: migrate
// leaves it (locked). A lease whose owner is gone (a dead pid, or a live
// pid with another start id: a reused pid) does not hold the file.
func TestPrimeLeaseHonoured(t *testing.T) {
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { owner.Process.Kill(); owner.Wait() }()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(casesDir, "c06-v2-hook-message", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		pid        int
		start      string
		wantResult string
	}{
		{"live owner", owner.Process.Pid, startID(t, owner.Process.Pid), ResultLocked},
		{"dead owner", dead.Process.Pid, "proc:1", ResultUpgraded},
		{"reused pid", owner.Process.Pid, "proc:1", ResultUpgraded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := filepath.Join(t.TempDir(), ".prime", "agent")
			sessions := filepath.Join(agent, "sessions")
			if err := os.MkdirAll(sessions, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(sessions, "s.jsonl")
			if err := os.WriteFile(p, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			writeLease(t, agent, p, tc.pid, tc.start)
			out := runMigrate(t, sessions, nil)
			r := out.results["s.jsonl"]
			if r.Result != tc.wantResult {
				t.Fatalf("%s (%s), want %s", r.Result, r.Detail, tc.wantResult)
			}
			got, _ := os.ReadFile(p)
			if (string(got) == string(orig)) != (tc.wantResult == ResultLocked) {
				t.Errorf("file rewritten: %v, want %v", string(got) != string(orig), tc.wantResult != ResultLocked)
			}
			if tc.wantResult == ResultLocked && !strings.Contains(r.Detail, "Prime Agent has the session open") {
				t.Errorf("detail %q does not say who holds it", r.Detail)
			}
		})
	}
}
