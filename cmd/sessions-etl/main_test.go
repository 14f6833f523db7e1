package main

import (
	"os"
	"testing"
)

// asCLIEnv makes the test binary run as the command itself: tests that
// need a real process (peak memory of an export) re-execute the test
// binary with it set and the command's arguments after "--".
const asCLIEnv = "SESSIONS_ETL_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{os.Args[0]}, os.Args[i+1:]...)
				break
			}
		}
		main()
	}
	os.Exit(m.Run())
}
