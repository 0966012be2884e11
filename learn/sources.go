package learn

// The sources the lessons cite, each once here.
var (
	srcKleppmann    = Source{"Martin Kleppmann, How to do distributed locking (2016)", "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html"}
	srcAntirez      = Source{"Salvatore Sanfilippo (antirez), Is Redlock safe? (2016)", "http://antirez.com/news/101"}
	srcRedisLock    = Source{"Redis docs, Distributed Locks with Redis", "https://redis.io/docs/latest/develop/use/patterns/distributed-locks/"}
	srcRedisSet     = Source{"Redis docs, SET (the NX PX lock pattern and its compare-and-delete unlock script)", "https://redis.io/docs/latest/commands/set/"}
	srcSetnx        = Source{"Redis docs, SETNX (the old locking pattern and why it was replaced)", "https://redis.io/docs/latest/commands/setnx/"}
	srcSentinel     = Source{"Redis docs, High availability with Redis Sentinel (asynchronous replication loses acknowledged writes)", "https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/"}
	srcJepRedis     = Source{"Kyle Kingsbury, Jepsen: Redis (2013)", "https://aphyr.com/posts/283-jepsen-redis"}
	srcJepEtcd      = Source{"Jepsen, etcd 3.4.3 (2020): etcd locks are not safe under process pauses", "https://jepsen.io/analyses/etcd-3.4.3"}
	srcJepZK        = Source{"Kyle Kingsbury, Jepsen: ZooKeeper (2013)", "https://aphyr.com/posts/291-jepsen-zookeeper"}
	srcZKGuide      = Source{"ZooKeeper Programmer's Guide: sessions and ephemeral nodes", "https://zookeeper.apache.org/doc/current/zookeeperProgrammers.html"}
	srcZKRecipes    = Source{"ZooKeeper Recipes: locks", "https://zookeeper.apache.org/doc/current/recipes.html#sc_recipes_Locks"}
	srcCurator      = Source{"Apache Curator, Error handling (SUSPENDED and LOST)", "https://curator.apache.org/docs/errors/"}
	srcCuratorTN    = Source{"Apache Curator Tech Note 12, connection semantics", "https://cwiki.apache.org/confluence/spaces/CURATOR/pages/68720068/TN12"}
	srcEtcdNotes    = Source{"etcd docs, Notes on the usage of lock and lease", "https://etcd.io/docs/v3.5/learning/why/#notes-on-the-usage-of-lock-and-lease"}
	srcEtcd22082    = Source{"etcd-io/etcd#22082: a retried Mutex.Unlock deletes a newer lock of the same session (open)", "https://github.com/etcd-io/etcd/issues/22082"}
	srcJepJetcd     = Source{"Jepsen, jetcd 0.8.2: retried requests that were not idempotent", "https://jepsen.io/analyses/jetcd-0.8.2"}
	srcPgbFeat      = Source{"PgBouncer, Features: what each pooling mode supports (session-level advisory locks need session pooling)", "https://www.pgbouncer.org/features.html"}
	srcPgAdvis      = Source{"PostgreSQL 15 docs, Advisory Locks (session and transaction level)", "https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS"}
	srcAuthentik    = Source{"goauthentik/authentik#23876: session advisory locks through PgBouncer's transaction pooling", "https://github.com/goauthentik/authentik/issues/23876"}
	srcNatsKV       = Source{"NATS docs, JetStream Key/Value store (a bucket's TTL, Create and Update by revision)", "https://docs.nats.io/nats-concepts/jetstream/key-value-store"}
	srcRedisson5698 = Source{"redisson/redisson#5698: the watchdog intermittently does not renew an RLock, which is released early", "https://github.com/redisson/redisson/issues/5698"}
	srcEtcdLock     = Source{"etcd contrib/lock: Kleppmann's scenario on etcd, and fencing by revision", "https://github.com/etcd-io/etcd/tree/main/contrib/lock"}
)
