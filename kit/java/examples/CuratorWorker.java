// CuratorWorker is a Java kit worker for Apache Curator's InterProcessMutex
// (Debian's libcurator-recipes-java), as Curator's users call it: one
// CuratorFramework (session timeout = the lease), acquire(timeout),
// release(); the fencing token is the czxid of the mutex's lock node, and
// an access is refused once the connection was SUSPENDED or LOST since the
// grant, as Curator's tech notes ask of a lock holder.
//
//   CP=/usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-simple.jar
//   javac -cp $CP -d out kit/java/LockcheckKit.java kit/java/examples/CuratorWorker.java
//   check conformance --lock zk-sequential --worker-cmd "java -cp out:$CP CuratorWorker"

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorWorker implements LockcheckKit.Lock {
  /** InterProcessMutex with its lock node's path in reach (getLockPath is protected). */
  static class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework zk, String path) {
      super(zk, path);
    }

    String node() {
      return getLockPath();
    }
  }

  final LockcheckKit.Config cfg;
  final CuratorFramework zk;
  final Random rng;
  final Map<String, Mutex> held = new HashMap<>();
  final Map<String, Integer> grantedAt = new HashMap<>();
  volatile int troubles = 0; // SUSPENDED and LOST states seen

  CuratorWorker(LockcheckKit.Config cfg) throws Exception {
    this.cfg = cfg;
    int lease = (int) cfg.leaseMs();
    this.zk = CuratorFrameworkFactory.builder()
        .connectString(String.join(",", cfg.lockAddrs()))
        .sessionTimeoutMs(lease)
        .connectionTimeoutMs(Math.max(lease, 1000))
        .retryPolicy(new ExponentialBackoffRetry(100, 3))
        .build();
    zk.getConnectionStateListenable().addListener((c, state) -> {
      if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) troubles++;
    });
    zk.start();
    if (!zk.blockUntilConnected(10, TimeUnit.SECONDS)) {
      zk.close();
      throw new LockcheckKit.Definite("no ZooKeeper session within 10 s");
    }
    this.rng = new Random(cfg.seed() * 1000003 + cfg.process());
  }

  @Override
  public LockcheckKit.Grant acquire(String key, long deadline) throws Exception {
    Mutex m = held.computeIfAbsent(key, k -> new Mutex(zk, "/kit-lock/" + k));
    long wait = Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
    int before = troubles;
    if (!m.acquire(wait, TimeUnit.MILLISECONDS)) {
      throw new LockcheckKit.NotAcquired(); // Curator deleted its node on the timeout
    }
    Stat st = zk.checkExists().forPath(m.node());
    if (st == null) throw new Exception("granted, but the lock node is gone");
    grantedAt.put(key, before);
    return new LockcheckKit.Grant(String.format("p%d-%016x", cfg.process(), rng.nextLong()), st.getCzxid());
  }

  @Override
  public void check(String key, LockcheckKit.Grant g) throws Exception {
    Integer at = grantedAt.get(key);
    if (at == null || at != troubles) {
      throw new LockcheckKit.Definite("the connection was SUSPENDED or LOST since the grant");
    }
  }

  @Override
  public boolean release(String key, LockcheckKit.Grant g) throws Exception {
    Mutex m = held.get(key);
    Integer at = grantedAt.remove(key);
    if (m == null || !m.isOwnedByCurrentThread()) return false;
    m.release();
    return at != null && at == troubles;
  }

  @Override
  public void close() {
    zk.close();
  }

  public static void main(String[] args) {
    LockcheckKit.main(CuratorWorker::new);
  }
}
