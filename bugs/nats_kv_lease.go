package bugs

func init() {
	register(Bug{
		ID:    "nats-kv-lease",
		Order: 13,
		Title: "The NATS KV lock recipe is a lease",
		Runs: []Run{
			{Report: "[NATS KV walkthrough](https://docs.nats.io/nats-concepts/jetstream/key-value-store/kv_walkthrough)'s lock recipe (Create with a bucket TTL) under a pause longer than the TTL",
				Component: "nats-server 2.9.10, one server, `nats-kv`",
				Args:      []string{"--scenario", "nats-kv-pause"},
				Invalid:   "10/10", FixedIn: "by design (a lease); the Create revision as a fencing token: valid 3/3 with `--fencing`"},
		},
		What: "A holder paused past the bucket's TTL loses the key, a rival creates it, the first resumes and writes. With " +
			"the Create revision as a fencing token, valid.",
	})
}
