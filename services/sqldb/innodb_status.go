package sqldb

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// innodbForUpdateTable is the table whose rows mysql-for-update locks
// (workloads' MariaDB dialect), in the form SHOW ENGINE INNODB STATUS
// names it after the database.
const innodbForUpdateTable = "`.`lockcheck_for_update`"

// innodbRowHolders reads the text of SHOW ENGINE INNODB STATUS, taken
// with innodb_status_output_locks on, and returns which session (MariaDB
// thread id, CONNECTION_ID()) holds each row of lockcheck_for_update, by
// the row's name: the rows on whose primary key a transaction holds an
// exclusive record lock. A lock the transaction waits for is not held,
// nor is a lock on the gap before a row only. The status lists every
// transaction as a "---TRANSACTION" line, its session in a "MariaDB
// thread id N," line, then its locks: a "RECORD LOCKS ... index PRIMARY
// of table `db`.`lockcheck_for_update` ... lock_mode X ..." line and, for
// each record, a "Record lock" line and its fields, field 0 (the primary
// key) as " 0: len N; hex HEX; asc ...;;". The text is the server's, and
// the parse never fails: what it does not recognise it skips.
func innodbRowHolders(status string) map[string]int64 {
	held := map[string]int64{}
	var session int64 // of the transaction being read; 0 before its thread line
	locked := false   // the record locks being read are held exclusive row locks
	record := false   // the next field 0 is a locked record's key
	for line := range strings.Lines(status) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "---TRANSACTION "):
			session, locked, record = 0, false, false
		case strings.HasPrefix(line, "MariaDB thread id "), strings.HasPrefix(line, "MySQL thread id "):
			_, rest, _ := strings.Cut(line, "thread id ")
			id, _, _ := strings.Cut(rest, ",")
			if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > 0 {
				session = n
			}
		case strings.HasPrefix(line, "RECORD LOCKS "):
			locked = strings.Contains(line, " index PRIMARY of table `") && strings.Contains(line, innodbForUpdateTable+" ") &&
				strings.Contains(line, " lock_mode X") && !strings.Contains(line, " waiting") &&
				!strings.Contains(line, "gap before rec") && !strings.Contains(line, "insert intention")
			record = false
		case strings.HasPrefix(line, "TABLE LOCK "), strings.HasPrefix(line, "------- TRX HAS BEEN WAITING"):
			locked, record = false, false
		case strings.HasPrefix(line, "Record lock, "):
			// heap no 1 is the page's supremum, the end of its records,
			// not a row.
			record = locked && !strings.HasPrefix(line, "Record lock, heap no 1 ")
		case record && strings.HasPrefix(line, " 0: len "):
			record = false
			_, rest, ok := strings.Cut(line, "; hex ")
			if !ok {
				continue
			}
			h, _, _ := strings.Cut(rest, ";")
			name, err := hex.DecodeString(h)
			if err != nil || session == 0 {
				continue
			}
			held[string(name)] = session
		}
	}
	return held
}
