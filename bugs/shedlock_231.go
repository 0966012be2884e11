package bugs

func init() {
	register(Bug{
		ID:    "shedlock-231",
		Order: 26,
		Title: "ShedLock: a lock row whose expiry is the client's clock, taken again by a client whose clock is ahead",
		Runs: []Run{
			{Report: "[lukas-krecan/ShedLock#231](https://github.com/lukas-krecan/ShedLock/issues/231): \"Node time is not synchronized, Jdbc lock will fail\" (the maintainer: \"Yes, it's indeed the case\")",
				Component: "PostgreSQL 15 (Debian), `pg-unique-row-client-clock` (ShedLock's JDBC recipe: `lock_until` written and compared as the client's time)",
				Args:      []string{"--lock", "pg-unique-row-client-clock", "--nemesis", "clock-client", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "ShedLock 4.9 `usingDbTime()` ([#263](https://github.com/lukas-krecan/ShedLock/issues/263)): the database's `now()` decides (next row)"},
			{Report: "the same",
				Component: "the same row lock on the database's clock (`pg-unique-row`, what `usingDbTime()` does)",
				Args:      []string{"--lock", "pg-unique-row", "--nemesis", "clock-client", "--time", "15s"},
				Invalid:   "0/10 (10 valid)", FixedIn: "`usingDbTime()`", Fixed: true},
		},
		What: "ShedLock's JDBC provider takes a lock with `UPDATE ... SET lock_until = ? ... WHERE name = ? AND lock_until <= ?`, " +
			"both times from the node that asks. A node whose clock runs ahead of the holder's sees the holder's `lock_until` " +
			"as past and takes the lock while the holder works. `pg-unique-row-client-clock` is that recipe: a row per key " +
			"whose expiry is written and compared on the client's clock; `clock-client` moves a waiting worker's clock ahead " +
			"(lockcheck's workers read their wall clock from a file the nemesis writes), and it takes the row under the " +
			"holder: invalid 10/10, with `clock-moved-while-held` reached in every run. On the database's clock, the same jumps change nothing: valid 10/10, the danger reached in every run as well.",
	})
}
