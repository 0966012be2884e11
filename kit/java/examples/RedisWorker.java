// RedisWorker is a Java kit worker for a Redis lock with the JDK alone:
// SET key owner NX PX lease and an INCR fencing token in one script,
// released by a Lua compare-and-delete, over the kit's own RESP client.
//
//   javac -d out kit/java/LockcheckKit.java kit/java/examples/RedisWorker.java
//   check conformance --lock redis-set-px --worker-cmd "java -cp out RedisWorker"

import java.util.Random;

public class RedisWorker implements LockcheckKit.Lock {
  static final String ACQUIRE =
      "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0";
  static final String RELEASE =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

  final LockcheckKit.Config cfg;
  final LockcheckKit.Resp redis;
  final Random rng;

  RedisWorker(LockcheckKit.Config cfg) {
    this.cfg = cfg;
    this.redis = new LockcheckKit.Resp(cfg.lockAddrs().get(0), (int) cfg.opTimeoutMs());
    this.rng = new Random(cfg.seed() * 1000003 + cfg.process());
  }

  @Override
  public LockcheckKit.Grant acquire(String key, long deadline) throws Exception {
    while (true) {
      String owner = String.format("p%d-%016x", cfg.process(), rng.nextLong());
      long token = (Long) redis.call("EVAL", ACQUIRE, 2, key, key + ":token", owner, cfg.leaseMs());
      if (token > 0) return new LockcheckKit.Grant(owner, token);
      if (System.nanoTime() >= deadline) throw new LockcheckKit.NotAcquired();
      Thread.sleep(cfg.retryMs());
    }
  }

  @Override
  public boolean release(String key, LockcheckKit.Grant g) throws Exception {
    return (Long) redis.call("EVAL", RELEASE, 1, key, g.owner) == 1;
  }

  @Override
  public void close() {
    redis.close();
  }

  public static void main(String[] args) {
    LockcheckKit.main(RedisWorker::new);
  }
}
