package fstx

import "golang.org/x/sys/unix"

// errNoAttr is the error of a get of an attribute that is not there.
const errNoAttr = unix.ENODATA
