package fstx

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// Lease is Prime Agent's claim on an open session:
// <agentDir>/session-leases/<sha256 of the canonical session path>.lock/owner.json.
type Lease struct {
	PID            int    `json:"pid"`
	ProcessStartID string `json:"processStartId"`
	SessionPath    string `json:"sessionPath"`
	File           string `json:"-"` // the owner.json read
}

// LiveLease returns the lease on the session file at path whose owner
// still runs (the same process: same pid and start id), or nil. The lease
// directory is looked for in every ancestor of the file (the agent
// directory holds both sessions/ and session-leases/). A lease whose owner
// is gone is stale: ignored, and left to its agent.
func LiveLease(path string) *Lease {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil
	}
	sum := sha256.Sum256([]byte(real))
	name := hex.EncodeToString(sum[:]) + ".lock"
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		owner := filepath.Join(d, "session-leases", name, "owner.json")
		if b, err := os.ReadFile(owner); err == nil {
			var l Lease
			if json.Unmarshal(b, &l) == nil && l.PID > 0 && leaseOwnerAlive(l) {
				l.File = owner
				return &l
			}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
