package report

import (
	"context"
	"database/sql"
	"strings"
)

// subagentTree gives session rows their subagents (SPEC.md §7.3): the
// sessions a roll-up of theirs stands for (usage.rollup_of_session_id).
// Each parent row gets Subagents and WithSubagents (its own usage plus its
// subagents', theirs included, as far as the report's rows hold them), and
// the rows are reordered so that each child follows its parent.
func subagentTree(ctx context.Context, db *sql.DB, r *Report) error {
	q, err := db.QueryContext(ctx, `SELECT DISTINCT session_id, rollup_of_session_id FROM usage
WHERE rollup_of_session_id IS NOT NULL ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	defer q.Close()
	children := map[string][]string{}
	parentOf := map[string]string{}
	for q.Next() {
		var p, c string
		if err := q.Scan(&p, &c); err != nil {
			return err
		}
		for _, c := range strings.Split(c, "\n") { // a roll-up naming several children: one line each
			if _, taken := parentOf[c]; taken || c == p || c == "" {
				continue // a child rolled up by two sessions stays under the first
			}
			children[p] = append(children[p], c)
			parentOf[c] = p
		}
	}
	if err := q.Err(); err != nil {
		return err
	}
	if len(children) == 0 {
		return nil
	}
	byKey := map[string]int{}
	for i := range r.Rows {
		byKey[r.Rows[i].Key] = i
	}
	// with computes a row's usage with its subagents', once per row; seen
	// guards against a cycle of roll-ups.
	done := map[string]bool{}
	var with func(key string, seen map[string]bool) Usage
	with = func(key string, seen map[string]bool) Usage {
		i, ok := byKey[key]
		if !ok || seen[key] {
			return Usage{}
		}
		row := &r.Rows[i]
		if done[key] {
			if row.WithSubagents != nil {
				return *row.WithSubagents
			}
			return row.Usage
		}
		seen[key] = true
		total := row.Usage
		var kids []string
		for _, c := range children[key] {
			if _, ok := byKey[c]; !ok {
				continue
			}
			kids = append(kids, c)
			total.add(with(c, seen))
		}
		done[key] = true
		if len(kids) > 0 {
			row.Subagents = kids
			row.WithSubagents = &total
		}
		return total
	}
	for i := range r.Rows {
		with(r.Rows[i].Key, map[string]bool{})
	}
	// Children after their parent, depth first, in the rows' order.
	out := make([]Row, 0, len(r.Rows))
	placed := map[string]bool{}
	var place func(i, depth int)
	place = func(i, depth int) {
		row := r.Rows[i]
		if placed[row.Key] {
			return
		}
		placed[row.Key] = true
		row.Depth = depth
		out = append(out, row)
		for _, c := range row.Subagents {
			place(byKey[c], depth+1)
		}
	}
	for i, row := range r.Rows {
		if p, ok := parentOf[row.Key]; ok {
			if _, shown := byKey[p]; shown {
				continue // placed under its parent
			}
		}
		place(i, 0)
	}
	for i := range r.Rows { // rows only reachable through a cycle
		place(i, 0)
	}
	r.Rows = out
	return nil
}
