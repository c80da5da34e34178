// Enqueue a task in the same transaction as your own write, with pgx.
//
//	go run . postgresql://user@host:5432/taskyard
//
// The order row and its task commit together or not at all
// (docs/transactional-enqueue.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func main() {
	dsn := os.Getenv("DATABASE_URL")
	if len(os.Args) > 1 {
		dsn = os.Args[1]
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		fail(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx,
		`CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item text NOT NULL, task_id uuid)`); err != nil {
		fail(err)
	}

	var orderID int64
	var taskID string
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { // COMMIT, or ROLLBACK on an error
		if err := tx.QueryRow(ctx, `INSERT INTO orders (item) VALUES ($1) RETURNING id`, "book").Scan(&orderID); err != nil {
			return err
		}
		args := []int64{orderID, 1} // pgx encodes Go values as JSON for jsonb parameters
		options := map[string]any{"request_id": fmt.Sprintf("order-%d", orderID), "labels": map[string]string{"via": "pgx"}}
		if err := tx.QueryRow(ctx, `SELECT taskyard_submit($1, $2::jsonb, $3::jsonb, $4::jsonb)::text`,
			"add", args, map[string]any{}, options).Scan(&taskID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE orders SET task_id = $1 WHERE id = $2`, taskID, orderID)
		return err
	})
	if err != nil {
		fail(err)
	}
	fmt.Printf("order %d committed with task %s\n", orderID, taskID)

	// A bad call raises, and the transaction's own writes roll back with it.
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO orders (item) VALUES ('never stored')`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT taskyard_submit('no_such_task')`)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		fmt.Printf("refused: sqlstate %s, reason %s, field %s\n", pgErr.Code, pgErr.Detail, pgErr.Hint)
	} else {
		fail(fmt.Errorf("expected a refusal, got %v", err))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
