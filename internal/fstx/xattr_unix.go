//go:build linux || darwin

package fstx

import (
	"bytes"
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// copyXattrs gives dst every extended attribute of the file at src, ACLs
// (system.posix_acl_access) included: dropping an access ACL can widen who
// may read a session. An attribute of the security namespace (an SELinux
// label, which the policy sets on the new file) that cannot be set is
// left to the system; any other failure is an error, so that the original
// is never replaced by a file with fewer restrictions.
func copyXattrs(src string, dst *os.File) error {
	s, err := os.Open(src)
	if err != nil {
		return err
	}
	defer s.Close()
	fd := int(s.Fd())
	names, err := listXattrs(fd)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return err
	}
	for _, name := range names {
		val, err := getXattr(fd, name)
		if err != nil {
			if errors.Is(err, errNoAttr) {
				continue // removed meanwhile
			}
			return err
		}
		if err := unix.Fsetxattr(int(dst.Fd()), name, val, 0); err != nil {
			if strings.HasPrefix(name, "security.") {
				continue
			}
			return err
		}
	}
	return nil
}

func listXattrs(fd int) ([]string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Flistxattr(fd, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, b := range bytes.Split(buf[:n], []byte{0}) {
			if len(b) > 0 {
				names = append(names, string(b))
			}
		}
		return names, nil
	}
}

func getXattr(fd int, name string) ([]byte, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Fgetxattr(fd, name, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}
