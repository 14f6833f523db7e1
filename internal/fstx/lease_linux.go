package fstx

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// leaseOwnerAlive reports whether the lease's process still runs: the pid
// exists and, when the lease records one, its start time (field 22 of
// /proc/<pid>/stat, "proc:"+that number) is the same — a reused pid is
// another process.
func leaseOwnerAlive(l Lease) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(l.PID) + "/stat")
	if err != nil {
		return false
	}
	want, ok := strings.CutPrefix(l.ProcessStartID, "proc:")
	if !ok {
		return ProcessAlive(l.PID) // another kind of start id: the pid alone
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return true
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state): field 22 (starttime) is fields[19].
	if len(fields) < 20 {
		return true
	}
	return fields[19] == want
}
