//go:build windows && cgo && mingw_ucrt_shim

package ucrtshim

/*
#cgo CFLAGS: -D_UCRT -D__MSVCRT_VERSION__=0xE00
#cgo CXXFLAGS: -D_UCRT -D__MSVCRT_VERSION__=0xE00
*/
import "C"
