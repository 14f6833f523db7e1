package ingest

import (
	"context"
	"time"
)

// budgetPatience is how long a listing waits for the budget without any
// member being read meanwhile before it leaves the member to a cursor: a
// caller that does not read every member it is given (or not yet) never
// stalls discovery.
var budgetPatience = 2 * time.Second

// reserve reserves size bytes of the pending budget for the member the
// listing is at, and reports whether it may be held in memory. Without
// wait, only a member of at most maxPendingMember bytes that fits now is
// held. With wait (Root.ReadAsListed), a member of up to maxPendingBytes
// waits for the members held before it to be read, as long as they are
// read (budgetPatience between two reads at most) and ctx is not done.
func (ix *archiveIndex) reserve(ctx context.Context, size int64, wait bool) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !wait || size > maxPendingBytes {
		if size <= maxPendingMember && ix.pendingBytes+size <= maxPendingBytes {
			ix.pendingBytes += size
			return true
		}
		return false
	}
	stop := context.AfterFunc(ctx, func() {
		ix.mu.Lock()
		ix.cond.Broadcast()
		ix.mu.Unlock()
	})
	defer stop()
	for ix.pendingBytes+size > maxPendingBytes {
		if ctx.Err() != nil {
			return false
		}
		before := ix.pendingBytes
		timedOut := false
		t := time.AfterFunc(budgetPatience, func() {
			ix.mu.Lock()
			timedOut = true
			ix.cond.Broadcast()
			ix.mu.Unlock()
		})
		ix.cond.Wait()
		t.Stop()
		if timedOut && ix.pendingBytes >= before {
			return false // nobody read a member meanwhile
		}
	}
	ix.pendingBytes += size
	return true
}

// release gives back the budget of a member held in memory that nobody
// will read.
func (ix *archiveIndex) release(ord int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if data, ok := ix.pending[ord]; ok {
		delete(ix.pending, ord)
		ix.pendingBytes -= int64(len(data))
		ix.cond.Broadcast()
	}
}

// closeZip closes the zip reader of an index nobody reads from.
func (ix *archiveIndex) closeZip() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.zr != nil {
		ix.zr.Close()
		ix.zr = nil
	}
}
