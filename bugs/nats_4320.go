package bugs

func init() {
	register(Bug{
		ID:    "nats-4320",
		Order: 12,
		Title: "NATS JetStream: two `Create`s of one KV key both succeed",
		Runs: []Run{
			{Report: "[nats-io/nats-server#4320](https://github.com/nats-io/nats-server/issues/4320): \"Serializability of Expected-Last-Subject-Sequence is not guaranteed in clustered stream\": two clients' `Create` of one KV key both succeed",
				Component: "nats-server 2.9.10 (Debian), three servers, the bucket on all three; nats.go v1.55.0 (`nats-kv-r3`)",
				Args:      []string{"--scenario", "nats-kv-create-race"},
				Invalid:   "10/10", FixedIn: "2.9.21 ([nats-io/nats-server#4319](https://github.com/nats-io/nats-server/pull/4319))"},
			{Report: "the same, on a fixed version",
				Component: "nats-server 2.15.2 built from the Go module",
				Args:      []string{"--scenario", "nats-kv-create-race", "--service-version", "2.15.2"},
				Invalid:   "0/10 (10 valid)", FixedIn: "fixed", Fixed: true},
		},
		What: "On a three-server cluster with the bucket replicated on all three, nats-server 2.9.10 does not serialize " +
			"concurrent publishes that expect the same last sequence, so two clients both create the lock key, with no " +
			"fault at all. The same scenario on 2.15.2 (built from the server's Go module, `--service-version 2.15.2`) is " +
			"valid at all ten seeds: the command fails on the broken version and passes on the fixed one.",
	})
}
