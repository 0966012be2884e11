package bugs

func init() {
	register(Bug{
		ID:    "etcd-12528",
		Order: 24,
		Title: "etcd: an old leader revokes leases its successor keeps alive",
		Runs: []Run{
			{Report: "[etcd-io/etcd#12528](https://github.com/etcd-io/etcd/issues/12528): after a leader change caused by a raft loop stalled under CPU load, the old leader's LeaseRevoke deletes a key whose lease is kept alive on the new leader (PR [#12531](https://github.com/etcd-io/etcd/pull/12531), closed unmerged)",
				Component: "etcd 3.4.23 (Debian), three members; Go client 3.5.35, `etcd-mutex`",
				Args:      leaderLogStall(),
				Invalid:   "4/10 (6 valid)", FixedIn: "3.4.31, 3.5.13 and 3.6.0 by [etcd-io/etcd#16822](https://github.com/etcd-io/etcd/pull/16822), the fix of etcd-io/etcd#15247, which the thread calls the same issue"},
			{Report: "the same, on a fixed version",
				Component: "etcd 3.6.16 built from the Go module, three members",
				Args:      leaderLogStall("--service-version", "3.6.16"),
				Invalid:   "0/10 (10 valid)", FixedIn: "fixed", Fixed: true},
		},
		What: "The reporter slept 5 s in the raft loop (`raftNode.start`) to mimic CPU load: the leader stepped down, and when " +
			"its loop ran again it sent the revocations of the leases it had let expire meanwhile, whose keepalives had gone " +
			"to the new leader, and the new leader applied them. The same run as `etcd-15247` stalls the leader's raft " +
			"loop the way a slow disk does (its log's fsyncs held); the revocations come when the stall ends. Of the four invalid runs on 3.4.23, two are this report's: at seeds 6 and 8 the holder's lease ended within " +
			"0.1 s of the stall's end (the old leader's revocations going out as its loop ran again), the holder's client " +
			"learned of it 0.1 s and 0.9 s later, and a waiter was granted in between. Seed 5 is etcd-15247's (the next " +
			"waiter granted 6 s into a stall while the holder's session stayed alive), and seed 10's overlap lasted 10 ms. " +
			"On 3.6.16 none of the ten was invalid",
	})
}
