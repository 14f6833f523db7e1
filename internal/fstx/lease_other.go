//go:build !linux

package fstx

// leaseOwnerAlive: without /proc, a lease whose pid runs is taken as live
// (a reused pid keeps a session locked, never rewrites an open one).
func leaseOwnerAlive(l Lease) bool { return ProcessAlive(l.PID) }
