//go:build windows && cgo && mingw_ucrt_shim

// With UCRT, mbstate_t is struct _Mbstatet, so std::streampos is
// std::fpos<_Mbstatet>; Debian's libstdc++ was built with msvcrt's int
// mbstate_t. Instantiating basic_streambuf<char> here, under the UCRT
// headers, provides the members DuckDB's library references (seekpos,
// seekoff); template instantiations are COMDAT, so the ones libstdc++
// also has do not clash.
#include <streambuf>

template class std::basic_streambuf<char>;
