// bcryptprimitives.dll for Wine before 9.0, which has none: Go 1.24 and
// later load it from system32 for ProcessPrng at start. This one fills the
// buffer with RtlGenRandom (advapi32's SystemFunction036). Used only to run
// Windows test binaries under Wine (make cross-windows-check); Windows has
// the real DLL.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
