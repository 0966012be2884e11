package bugs

func init() {
	register(Bug{
		ID:    "kleppmann-pause",
		Order: 3,
		Title: "A paused Redis lock holder",
		Runs: []Run{
			{Report: "[Kleppmann, \"How to do distributed locking\"](https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html) (the GC pause)",
				Component: "redis-server 7.0.15",
				Args:      []string{"--scenario", "redis-pause"},
				Invalid:   "10/10", FixedIn: "by design; fencing tokens (`--fencing`)"},
		},
		What: "Kleppmann's first example: `SET NX PX` with a 1 s lease, the holder paused past it, another worker takes the " +
			"expired key, the first resumes and writes: a double holder and a lost update. Valid with `--fencing`.",
	})
}
