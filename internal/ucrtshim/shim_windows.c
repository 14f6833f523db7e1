//go:build windows && cgo && mingw_ucrt_shim

// UCRT has no _snprintf export (its headers define it inline, file-local);
// DuckDB's library calls it as an external function. This one is exported
// under that name (the asm label) and has the same legacy behaviour.
#include <stdarg.h>
#include <stdio.h>

int ucrtshim_snprintf(char *buf, size_t n, const char *format, ...) __asm__("_snprintf");

int ucrtshim_snprintf(char *buf, size_t n, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	int r = _vsnprintf(buf, n, format, ap);
	va_end(ap);
	return r;
}
