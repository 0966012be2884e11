package workloads

func init() {
	register(Design{Name: "curator-mutex", Service: "zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true,
		Worker: []string{"java", "java/CuratorMutex.java"},
		Plain:  []string{"java", "java/plain/PlainCuratorMutex.java"},
		Summary: "the library Apache Curator (Debian libcurator-recipes-java), InterProcessMutex.acquire(timeout), in a Java worker " +
			"(workers/java/CuratorMutex.java, compiled on first use); ConnectionStateListener states as events; token = czxid " +
			"of its lock node; --lease is the session timeout"})
}

func init() {
	register(Design{Name: "curator-mutex-lost-only", Service: "zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true,
		Worker: []string{"java", "java/CuratorMutex.java", "--lost-only"},
		Summary: "curator-mutex, with the holder going on through SUSPENDED and stopping only at LOST, as Curator's " +
			"SessionConnectionStateErrorPolicy has its leader recipes do: Curator sends LOST a session timeout after SUSPENDED, " +
			"while the server expired the session a session timeout after it last heard the client (CURATOR-460)"})
}
