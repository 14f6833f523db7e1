package fstx

import (
	"syscall"
	"time"
)

func fillAtime(m *Meta, st *syscall.Stat_t) { m.Atime = time.Unix(st.Atimespec.Sec, st.Atimespec.Nsec) }
