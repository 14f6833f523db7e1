// Package userdirs says where sessions-etl keeps its own files on each
// operating system: the state directory (migrate and import run
// directories, lock files) and the cache directory (the report and query
// databases), and how a path under the home directory is shown.
//
// The functions take the operating system and the environment as
// arguments, so that every platform's rule is tested on any machine.
//
// Imports: the standard library only.
package userdirs
