package main

import (
	"encoding/base64"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// showPath is a path as text output prints it: as it is when it is valid
// UTF-8 without control or other non-printing characters, else quoted Go
// style ("a\nb", "caf\xe9"), so that one line names one file and the name
// can be read back (strconv.Unquote) byte for byte.
func showPath(p string) string {
	if !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(p)
		}
	}
	return p
}

// pathBytes is the "path_bytes" of a JSON result: the base64 of a path
// that is not valid UTF-8 (JSON would turn its bad bytes into U+FFFD, and
// the "path" printed would name no file); "" (omitted) otherwise.
func pathBytes(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}
