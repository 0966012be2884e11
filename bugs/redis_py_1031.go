package bugs

func init() {
	register(Bug{
		ID:    "redis-py-1031",
		Order: 28,
		Title: "redis-py: a release that checks the owner, then deletes, deletes the next owner's lock",
		Runs: []Run{
			{Report: "[redis/redis-py#1031](https://github.com/redis/redis-py/pull/1031): `Lock.release()` ran WATCH, GET and DEL without MULTI, so the WATCH guarded nothing",
				Component: "redis-server 7.0.15, `redis-set-px-del` (the release deletes without an atomic owner check)",
				Args:      []string{"--lock", "redis-set-px-del", "--nemesis", "pause@release:lease+500ms*3", "--workers", "3", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "redis-py 3.0 (the Lua compare-and-delete release of `LuaLock` became `Lock`); Debian's 4.3.4 has it (`redis-py-lock`)"},
		},
		What: "redis-py's old `Lock.release()` read the key, compared it with its token and deleted it, with nothing between " +
			"the read and the delete: a holder stopped there past its TTL deletes the key of whoever took the lock next, and a " +
			"third client is granted it while the second works. lockcheck's `redis-set-px-del` releases with a plain `DEL`, " +
			"the limit of that window (the whole release is the gap between the check and the delete). The run stops the " +
			"holder just before its release, for the lease and half a second, three times: invalid 10/10, every run with `foreign-release` anomalies (a release that deleted another's key) and double holders (2 to 64 a run). redis-py's own " +
			"`Lock`, as Debian ships it, releases with a compare-and-delete script and never deletes another's key " +
			"(`redis-py-lock` under `pause`: its anomalies are the paused holder's own writes, [verdicts.md](verdicts.md)).",
	})
}
