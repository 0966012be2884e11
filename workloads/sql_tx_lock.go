package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// WorkloadRegisterInDB is the register workload with the register kept in
// the lock's own database, read and written inside the transaction that
// holds the lock: a session the server ends takes its uncommitted write
// with it. Only the designs that hold their lock in a transaction run it.
const WorkloadRegisterInDB = "register-in-db"

func init() {
	registerWorkload(Workload{Name: WorkloadRegisterInDB, Listed: true, InLock: true, Named: true,
		Summary: "the register lives in the lock's own database transaction"})
}

// txLockSQL is how a design takes a lock inside a transaction: prepare
// (optional, outside the transaction) makes sure the lock exists, lock
// waits for it within the dialect's lock timeout and returns two columns,
// the second the server's id of the session that ran it (the grant's
// Backend: behind a transaction-mode pooler, the server session the
// transaction runs on, not the one the client connected to).
type txLockSQL struct {
	prepare string
	lock    string
	arg     func(key string) any
}

// sqlTxLock is a lock held by an open transaction and released when it
// ends: pg-for-update and mysql-for-update (SELECT ... FOR UPDATE of the
// key's row in a lock table), pg-advisory-xact (pg_advisory_xact_lock).
// Acquire begins a transaction, sets the lock wait timeout to the acquire
// timeout, and waits for the lock; the fencing token is taken from the
// token sequence inside the transaction. The transaction stays open while
// the holder works, and COMMIT releases the lock. When the server ends the
// session (session-kill, the idle-in-transaction timeout, a partition's
// TCP timeouts) it rolls the transaction back and releases the lock.
//
// With WorkloadRegisterInDB the transaction is two-phase: the critical
// section writes the register in it and prepares it (PREPARE TRANSACTION,
// XA PREPARE), so that a critical section reported ok has a durable write
// whatever happens to the session next, and the release commits it. A
// prepared transaction whose client vanished before committing it (older
// than the server's session timeout) is committed by the next acquirer, as
// a transaction manager's recovery would.
type sqlTxLock struct {
	s    *sqlSession
	sql  txLockSQL
	cfg  Config
	rng  *rand.Rand
	inDB bool
	held map[string]*heldTx
}

var _ Lock = (*sqlTxLock)(nil)

// sqlTxLockInDB is an sqlTxLock whose critical section reads and writes
// the register inside the lock's transaction (WorkloadRegisterInDB).
type sqlTxLockInDB struct{ *sqlTxLock }

var _ Sectioner = sqlTxLockInDB{}

func newSQLTxLock(d *sqlDialect, q txLockSQL) func(Config, *rand.Rand, func(string)) (Lock, error) {
	return func(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
		s, err := newSQLSession(context.Background(), d, cfg, events)
		if err != nil {
			return nil, err
		}
		l := &sqlTxLock{s: s, sql: q, cfg: cfg, rng: rng, held: make(map[string]*heldTx),
			inDB: cfg.workload().InLock}
		if l.inDB {
			return sqlTxLockInDB{l}, nil
		}
		return l, nil
	}
}

// exec runs statements on the session, stopping at the first error.
func (l *sqlTxLock) exec(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := l.s.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// orphanAge is how old a prepared transaction must be before an acquirer
// commits it for a client that vanished: the server's session timeout
// (clusters: twice the lease, at least a second).
func (l *sqlTxLock) orphanAge() time.Duration { return max(2*l.cfg.Lease(), time.Second) }

// Acquire waits for the lock inside a new transaction, at most the acquire
// timeout.
func (l *sqlTxLock) Acquire(ctx context.Context, key string) (Grant, error) {
	if _, ok := l.held[key]; ok {
		return Grant{}, Definite(fmt.Errorf("acquire %s: this client already holds it", key))
	}
	if err := l.s.ensure(ctx); err != nil {
		return Grant{}, err
	}
	d, wait := l.s.d, ms(l.cfg.AcquireTimeoutMS)
	cctx, cancel := l.s.opCtx(ctx, wait)
	defer cancel()
	if l.inDB {
		l.resolveOrphans(cctx)
	}
	if l.sql.prepare != "" {
		if _, err := l.s.conn.ExecContext(cctx, d.rebind(l.sql.prepare), l.sql.arg(key)); err != nil {
			return Grant{}, l.s.fail(fmt.Errorf("acquire %s: %w", key, err))
		}
	}
	if !d.lockTimeoutInTx {
		if err := l.exec(cctx, d.lockTimeout(wait)); err != nil {
			return Grant{}, l.s.fail(fmt.Errorf("acquire %s: %w", key, err))
		}
	}
	owner := newOwner(l.cfg.Process, l.rng)
	h := &heldTx{owner: owner}
	begin := []string{"BEGIN"}
	if l.inDB {
		h.gid = fmt.Sprintf("lockcheck-%d-%s", time.Now().UnixMilli(), owner)
		begin = d.twoPhase.begin(h.gid)
	}
	if err := l.exec(cctx, begin...); err != nil {
		return Grant{}, l.s.fail(fmt.Errorf("acquire %s: %w", key, err))
	}
	fail := func(err error) (Grant, error) {
		l.rollback(ctx, h)
		if d.lockNotAvailable(err) {
			return Grant{}, ErrNotAcquired
		}
		return Grant{}, l.s.fail(fmt.Errorf("acquire %s: %w", key, err))
	}
	if d.lockTimeoutInTx {
		if err := l.exec(cctx, d.lockTimeout(wait)); err != nil {
			return fail(err)
		}
	}
	var v any
	var backend int64
	if err := l.s.conn.QueryRowContext(cctx, d.rebind(l.sql.lock), l.sql.arg(key)).Scan(&v, &backend); err != nil {
		return fail(err)
	}
	tok, err := l.s.token(ctx, l.s.conn)
	if err != nil {
		// The lock was held, the grant cannot be reported: unknown.
		g, err := fail(err)
		return g, undefinite(err)
	}
	l.held[key] = h
	return Grant{Owner: owner, Token: tok, Detail: fmt.Sprintf("session %d", l.s.id), Backend: backend}, nil
}

// rollback ends h's open transaction, dropping the session when that
// fails (the server rolls back what a closed session left open).
func (l *sqlTxLock) rollback(ctx context.Context, h *heldTx) {
	if l.s.conn == nil {
		return
	}
	cctx, cancel := l.s.opCtx(ctx, 0)
	defer cancel()
	stmts := []string{"ROLLBACK"}
	if h.gid != "" {
		stmts = l.s.d.twoPhase.rollback(h.gid)
	}
	if err := l.exec(cctx, stmts...); err != nil {
		_ = l.s.fail(err)
		if l.s.conn != nil { // a statement error: the session is fine but in an unknown state
			_ = l.s.conn.Raw(func(any) error { return errBadSession })
			_ = l.s.conn.Close()
			l.s.conn = nil
		}
	}
}

// resolveOrphans commits the prepared transactions older than orphanAge:
// their clients prepared them and vanished before committing. Errors are
// ignored (another acquirer may have committed the same one).
func (l *sqlTxLock) resolveOrphans(ctx context.Context) {
	rows, err := l.s.conn.QueryContext(ctx, l.s.d.twoPhase.list)
	if err != nil {
		_ = l.s.fail(err)
		return
	}
	var old []string
	cols, _ := rows.Columns()
	for rows.Next() {
		gid, err := scanGID(rows.Scan, len(cols))
		if err != nil || !strings.HasPrefix(gid, "lockcheck-") {
			continue
		}
		msText, _, _ := strings.Cut(strings.TrimPrefix(gid, "lockcheck-"), "-")
		at, err := strconv.ParseInt(msText, 10, 64)
		if err == nil && time.Since(time.UnixMilli(at)) > l.orphanAge() {
			old = append(old, gid)
		}
	}
	rows.Close()
	for _, gid := range old {
		if _, err := l.s.conn.ExecContext(ctx, l.s.d.twoPhase.commit(gid)); err == nil {
			l.s.events("committed the orphaned prepared transaction " + gid)
		}
	}
}

// scanGID reads a gid from a prepared-transactions row: one column (the
// gid), or MariaDB's XA RECOVER (formatID, gtrid_length, bqual_length,
// data).
func scanGID(scan func(...any) error, cols int) (string, error) {
	if cols == 1 {
		var gid string
		err := scan(&gid)
		return gid, err
	}
	var format, glen, blen int
	var data []byte
	if err := scan(&format, &glen, &blen, &data); err != nil {
		return "", err
	}
	if glen > len(data) {
		glen = len(data)
	}
	return string(data[:glen]), nil
}

// Release ends the transaction that holds the lock: COMMIT, or for a
// prepared one, COMMIT PREPARED / XA COMMIT (from a new session when the
// old one is gone). A server that had ended the transaction means the lock
// was already lost (Released=false); an answer lost on the way leaves the
// outcome unknown.
func (l *sqlTxLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	h, ok := l.held[key]
	if !ok || h.owner != g.Owner {
		return &history.Value{Released: history.Bool(false), Extra: &history.Extra{Detail: "no open transaction holds it"}}, nil
	}
	delete(l.held, key)
	if h.gid != "" && !h.prepared {
		// The critical section did not get as far as PREPARE: roll back
		// (a session the server ended has rolled back already).
		alive := l.s.conn != nil
		l.rollback(ctx, h)
		return &history.Value{Released: history.Bool(alive && l.s.conn != nil)}, nil
	}
	stmt := "COMMIT"
	if h.gid != "" {
		stmt = l.s.d.twoPhase.commit(h.gid)
		if err := l.s.ensure(ctx); err != nil {
			return nil, err
		}
	} else if l.s.conn == nil {
		return &history.Value{Released: history.Bool(false), Extra: &history.Extra{Detail: "the session holding it had ended"}}, nil
	}
	cctx, cancel := l.s.opCtx(ctx, 0)
	defer cancel()
	err := l.exec(cctx, stmt)
	if err == nil {
		return &history.Value{Released: history.Bool(true)}, nil
	}
	err = l.s.fail(fmt.Errorf("release %s: %w", key, err))
	var d definiteError
	if asDefinite(err, &d) {
		return &history.Value{Released: history.Bool(false), Extra: &history.Extra{Detail: "the server had ended the transaction: " + err.Error()}}, nil
	}
	return nil, err
}

// Close rolls back any open transaction and ends the session.
func (l *sqlTxLock) Close() error {
	for k, h := range l.held {
		if !h.prepared {
			l.rollback(context.Background(), h)
		}
		delete(l.held, k)
	}
	return l.s.Close()
}

// CriticalSection reads the register guarded by key, thinks, writes read+1
// and prepares the transaction, all in the transaction that holds the
// lock. Once prepared, the write is durable and will be committed (by the
// release, or by an acquirer's recovery); before, an error means the
// server rolls it back: no effect.
func (l sqlTxLockInDB) CriticalSection(ctx context.Context, key string, token int64, check func() error) (*history.Value, error) {
	val := &history.Value{Token: token}
	h, ok := l.held[key]
	if !ok || l.s.conn == nil {
		return val, Definite(fmt.Errorf("critical section on %s: no open transaction holds it", key))
	}
	if check != nil {
		if err := check(); err != nil {
			return val, Definite(err)
		}
	}
	d := l.s.d
	cctx, cancel := l.s.opCtx(ctx, 0)
	defer cancel()
	if _, err := l.s.conn.ExecContext(cctx, d.rebind(fmt.Sprintf(d.insertIfAbsent, "lockcheck_registers")), key); err != nil {
		return val, Definite(l.s.fail(fmt.Errorf("critical section on %s: %w", key, err)))
	}
	var read int64
	if err := l.s.conn.QueryRowContext(cctx, d.rebind("SELECT value FROM lockcheck_registers WHERE name = ?"), key).Scan(&read); err != nil {
		return val, Definite(l.s.fail(fmt.Errorf("read register %s: %w", key, err)))
	}
	cancel()
	val.Read, val.Wrote = history.Int64(read), history.Int64(read+1)
	if err := think(ctx, ms(l.cfg.ThinkMS)); err != nil {
		return val, err
	}
	wctx, wcancel := l.s.opCtx(ctx, 0)
	defer wcancel()
	if _, err := l.s.conn.ExecContext(wctx, d.rebind("UPDATE lockcheck_registers SET value = ? WHERE name = ?"), read+1, key); err != nil {
		return val, Definite(l.s.fail(fmt.Errorf("write register %s: %w", key, err)))
	}
	if err := l.exec(wctx, d.twoPhase.prepare(h.gid)...); err != nil {
		// A refusal by the server (definite) rolled it back; a lost
		// answer (info) may have prepared it.
		return val, l.s.fail(fmt.Errorf("prepare the write of %s: %w", key, err))
	}
	h.prepared = true
	return val, nil
}
