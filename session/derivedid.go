package session

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/google/uuid"
)

// entryIDNamespace makes v1→v2 ids deterministic: the id of the entry at
// position seq of session s is the first 8 hex digits of the name-based
// (SHA-1) UUID of "s/seq" in this namespace (SPEC.md §2.1).
var entryIDNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/sessions-etl/sessions-etl/v1-entry-id"))

// DerivedEntryID returns the deterministic 8-hex id migration gives the v1
// entry at record position seq (header = 0) of session sessionID. attempt
// is 0 unless an earlier candidate collided with an id of the same file.
func DerivedEntryID(sessionID string, seq, attempt int) string {
	var buf [64]byte
	d := derivedDigest(buf[:0], sessionID, seq, attempt)
	return hex.EncodeToString(d[:4])
}

// IsDerivedEntryID reports whether id is the id migration derives for the
// entry at record position seq of session sessionID on a first attempt
// (DerivedEntryID(sessionID, seq, 0)): an id that is no identity of its own,
// since two copies of one v1 entry (a fork's, its parent's) get different
// ones. Export and report identify such entries as v1 entries (SPEC.md §4).
// An id derived on a later attempt (after a collision within the file, odds
// about n²/2³³ for n ids) is taken as an ordinary id.
func IsDerivedEntryID(id, sessionID string, seq int) bool {
	if len(id) != 8 {
		return false
	}
	var buf [64]byte
	d := derivedDigest(buf[:0], sessionID, seq, 0)
	var want [8]byte
	hex.Encode(want[:], d[:4])
	return id == string(want[:])
}

// derivedDigest is the SHA-1 of entryIDNamespace and "s/seq[/attempt]":
// its first four bytes are those of the name-based UUID (uuid.NewSHA1 sets
// version and variant bits in bytes 6 and 8 only).
func derivedDigest(name []byte, sessionID string, seq, attempt int) [sha1.Size]byte {
	name = append(name, entryIDNamespace[:]...)
	name = append(name, sessionID...)
	name = append(name, '/')
	name = strconv.AppendInt(name, int64(seq), 10)
	if attempt > 0 {
		name = append(name, '/')
		name = strconv.AppendInt(name, int64(attempt), 10)
	}
	return sha1.Sum(name)
}
