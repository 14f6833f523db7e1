package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/duckdb/duckdb-go/v2"

	_ "github.com/sessions-etl/sessions-etl/internal/ucrtshim"
)

func main() {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var v string
	if err := db.QueryRow(`SELECT version() || ' sum=' || (SELECT sum(i) FROM range(10) t(i))::VARCHAR || ' ' || printf('%.2f', 3.14159)`).Scan(&v); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("duckdb", v)
}
