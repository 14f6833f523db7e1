package fstx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// LockConfig holds the timing of the agents' npm proper-lockfile protocol
// (SPEC.md §2.3). Fields are knobs so tests can shrink them.
type LockConfig struct {
	Stale  time.Duration // a lock whose mtime is older than this may be taken over (10 s)
	Update time.Duration // the holder refreshes the mtime this often (5 s)
	Poll   time.Duration // pause between attempts while waiting for a lock
}

// DefaultLockConfig is proper-lockfile's default timing.
var DefaultLockConfig = LockConfig{Stale: 10 * time.Second, Update: 5 * time.Second, Poll: 100 * time.Millisecond}

// ErrLocked reports a lock held by someone else (the agent, or another
// sessions-etl process) for longer than the caller was willing to wait.
// The errors returned wrap it in a *LockedError.
var ErrLocked = errors.New("locked")

// LockedError says who holds a file's lock.
type LockedError struct {
	Path  string
	Agent bool          // the agent's proper-lockfile lock (else another sessions-etl process)
	Age   time.Duration // how long ago the agent's lock was refreshed
	Lease *Lease        // Prime Agent's session lease, held by a running process
}

// Error names the file and says who holds its lock.
func (e *LockedError) Error() string { return e.Path + ": " + e.Hint() }

// Hint is the message a user needs: who holds the lock and what to do.
func (e *LockedError) Hint() string {
	if e.Lease != nil {
		return fmt.Sprintf("Prime Agent has the session open (lease %s, process %d is running): close that session, or wait with --lock-wait 30s", e.Lease.File, e.Lease.PID)
	}
	if e.Agent && e.Age < 0 {
		return fmt.Sprintf("the file's lock directory %s.lock has a modification time in the future (clock skew?): it never goes stale; remove it if no agent is running", e.Path)
	}
	if e.Agent {
		return fmt.Sprintf("the agent holds its lock on the file (refreshed %s ago): close that session, or wait with --lock-wait 30s", e.Age.Round(time.Millisecond))
	}
	return "another sessions-etl process is working on the file: run again when it is done, or wait with --lock-wait 30s"
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// ErrLockLost reports that a lock we held was taken over: its mtime is not
// the one we last set, or the lock directory vanished.
var ErrLockLost = errors.New("lock lost")

// AgentLock is a held proper-lockfile lock: the directory <realpath>.lock.
// Nothing is ever put inside the directory (the agent releases with rmdir).
// A goroutine refreshes the directory's mtime every Update; Check reports
// whether the lock is still ours.
type AgentLock struct {
	Dir string // the lock directory

	cfg   LockConfig
	mu    sync.Mutex
	mtime time.Time // mtime we last set, as stat reports it
	lost  error
	stop  chan struct{}
	done  chan struct{}
}

// LockPath returns the proper-lockfile lock directory for file: the file's
// canonical path (symbolic links resolved, as proper-lockfile's realpath
// option does by default) plus ".lock".
func LockPath(file string) (string, error) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(real)
	if err != nil {
		return "", err
	}
	return abs + ".lock", nil
}

// LockAgent takes the agent's lock on file, waiting up to wait while a live
// lock is held by someone else, and taking over a lock that is stale
// (mtime older than cfg.Stale) as proper-lockfile does. It returns an error
// wrapping ErrLocked when the wait ends with the lock still held.
func LockAgent(ctx context.Context, file string, wait time.Duration, cfg LockConfig) (*AgentLock, error) {
	dir, err := LockPath(file)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", file, err)
	}
	deadline := time.Now().Add(wait)
	for {
		if l := LiveLease(file); l != nil {
			// Prime Agent holds the session open (its lease, not a lock
			// directory): wait for it like for a live lock.
			if !time.Now().Before(deadline) {
				return nil, &LockedError{Path: file, Agent: true, Lease: l}
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(cfg.Poll):
			}
			continue
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			l := &AgentLock{Dir: dir, cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
			if err := l.touch(); err != nil {
				_ = os.Remove(dir)
				return nil, fmt.Errorf("lock %s: %w", file, err)
			}
			go l.refresh()
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		st, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // released meanwhile
		case err != nil:
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		age := time.Since(st.ModTime())
		if age > cfg.Stale {
			// Stale: remove and retry, as proper-lockfile does. A lock
			// directory that is not empty is not ours to remove.
			if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("lock %s: stale lock cannot be removed: %w", file, ErrLocked)
			}
			continue
		}
		if !time.Now().Before(deadline) {
			return nil, &LockedError{Path: file, Agent: true, Age: age}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cfg.Poll):
		}
	}
}

// RemoveStaleLock removes the proper-lockfile lock directory of file when
// it is stale (mtime older than cfg.Stale: its holder died, e.g. a killed
// sessions-etl), as the agent itself would before locking. A live lock, or
// one holding anything, is left. For files a run does not write, whose
// lock it never takes.
func RemoveStaleLock(file string, cfg LockConfig) {
	dir, err := LockPath(file)
	if err != nil {
		return
	}
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || time.Since(st.ModTime()) <= cfg.Stale {
		return
	}
	_ = os.Remove(dir)
}

// touch sets the lock directory's mtime to now (millisecond precision, as
// JavaScript sets it) and records what stat reports back.
func (l *AgentLock) touch() error {
	now := time.Now().Truncate(time.Millisecond)
	if err := os.Chtimes(l.Dir, now, now); err != nil {
		return err
	}
	st, err := os.Stat(l.Dir)
	if err != nil {
		return err
	}
	l.mtime = st.ModTime()
	return nil
}

func (l *AgentLock) refresh() {
	defer close(l.done)
	t := time.NewTicker(l.cfg.Update)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if err := l.checkLocked(); err != nil {
			l.lost = err
			l.mu.Unlock()
			return
		}
		if err := l.touch(); err != nil {
			l.lost = fmt.Errorf("%w: refresh: %v", ErrLockLost, err)
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

func (l *AgentLock) checkLocked() error {
	if l.lost != nil {
		return l.lost
	}
	st, err := os.Stat(l.Dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLockLost, err)
	}
	if !st.ModTime().Equal(l.mtime) {
		return fmt.Errorf("%w: %s was changed by another process", ErrLockLost, l.Dir)
	}
	return nil
}

// Check returns nil while the lock is still ours, else an error wrapping
// ErrLockLost.
func (l *AgentLock) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked()
}

// Release stops the refresh and removes the lock directory when it is
// still ours. It is safe to call more than once.
func (l *AgentLock) Release() error {
	select {
	case <-l.stop:
		return nil
	default:
		close(l.stop)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(); err != nil {
		return nil // not ours any more: leave it to its holder
	}
	if err := os.Remove(l.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("release %s: %w", l.Dir, err)
	}
	return nil
}

// OwnLock is the advisory lock (flock) that keeps two sessions-etl
// processes off the same session file. It lives in the state directory,
// under a name derived from the file's canonical path, because a flock held
// on the session file itself belongs to the inode that the rename replaces.
type OwnLock struct{ fl *flock.Flock }

// LockOwn takes the advisory lock for file under stateDir, waiting up to
// wait. It returns an error wrapping ErrLocked when another sessions-etl
// process holds it.
func LockOwn(ctx context.Context, stateDir, file string, wait time.Duration, poll time.Duration) (*OwnLock, error) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return nil, err
	}
	return lockOwn(ctx, stateDir, file, real, wait, poll)
}

// LockOwnNew is LockOwn for a file about to be created (import): the lock
// is the one LockOwn takes for the path once it exists (its directory's
// canonical path plus its name), so two imports never both create it.
func LockOwnNew(ctx context.Context, stateDir, file string, wait time.Duration, poll time.Duration) (*OwnLock, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	return lockOwn(ctx, stateDir, file, filepath.Join(dir, filepath.Base(file)), wait, poll)
}

func lockOwn(ctx context.Context, stateDir, file, real string, wait time.Duration, poll time.Duration) (*OwnLock, error) {
	if poll <= 0 {
		poll = DefaultLockConfig.Poll
	}
	sum := sha256.Sum256([]byte(real))
	dir := filepath.Join(stateDir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock directory: %w", err)
	}
	fl := flock.New(filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"))
	deadline := time.Now().Add(wait)
	for {
		ok, err := fl.TryLock()
		if err != nil {
			return nil, fmt.Errorf("flock %s: %w", fl.Path(), err)
		}
		if ok {
			return &OwnLock{fl: fl}, nil
		}
		if !time.Now().Before(deadline) {
			return nil, &LockedError{Path: file}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Release drops the advisory lock.
func (o *OwnLock) Release() error { return o.fl.Unlock() }
