package scenarios

func init() {
	register(Scenario{
		Name: "nats-kv-pause",
		Summary: "a NATS JetStream KV lock holder (Create of the key in a bucket with a 1 s TTL, renewed by Update) is paused " +
			"(SIGSTOP) 5 ms after its grant for 3 TTLs: its renewals stop, the server removes the key when it is a TTL old, another worker " +
			"creates it, and the first resumes and writes; nats-server 2.9.10, one server",
		Args: []string{"--lock", "nats-kv", "--nemesis", "pause@grant+5ms:3xlease*3", "--lease", "1s",
			"--workers", "5", "--time", "20s"},
		Expect: "invalid (valid with --fencing: the Create revision is the token)",
		Want:   "U", WantFenced: "S",
	})
	register(Scenario{
		Name: "nats-kv-create-race",
		Summary: "no fault: workers race to Create one KV key in a bucket replicated on a three-server JetStream cluster; " +
			"a clustered stream's leader checks Nats-Expected-Last-Subject-Sequence against what it has applied, not " +
			"against proposals still in flight, so two Creates of the same key can both succeed " +
			"(nats-io/nats-server#4320, fixed in 2.9.21; Debian ships 2.9.10)",
		Args: []string{"--lock", "nats-kv-r3", "--nemesis", "none", "--lease", "1s", "--workers", "10", "--time", "10s"},
		Expect: "invalid on nats-server before 2.9.21: two holders, each with its own revision (valid with --fencing: the later revision wins at the resource; " +
			"valid on one server, nats-kv: the race is in the clustered path)",
		Want: "U", WantFenced: "S",
	})
}
