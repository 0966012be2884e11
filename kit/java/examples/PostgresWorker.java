// PostgresWorker is a Java kit worker for a PostgreSQL session advisory
// lock through JDBC (Debian's libpostgresql-jdbc-java):
// pg_try_advisory_lock on a hash of the key, retried until the acquire
// timeout, pg_advisory_unlock to release, a fencing token from a sequence.
//
//   javac -d out kit/java/LockcheckKit.java kit/java/examples/PostgresWorker.java
//   check conformance --lock pg-advisory --worker-cmd "java -cp out:/usr/share/java/postgresql.jar PostgresWorker"

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Properties;
import java.util.Random;

public class PostgresWorker implements LockcheckKit.Lock {
  final LockcheckKit.Config cfg;
  final Connection conn;
  final Random rng;

  PostgresWorker(LockcheckKit.Config cfg) throws SQLException {
    this.cfg = cfg;
    Properties p = new Properties();
    p.setProperty("user", cfg.str("user"));
    if (!cfg.str("password").isEmpty()) p.setProperty("password", cfg.str("password"));
    p.setProperty("ApplicationName", cfg.str("session_name"));
    p.setProperty("connectTimeout", String.valueOf(Math.max(1, cfg.opTimeoutMs() / 1000)));
    p.setProperty("socketTimeout", String.valueOf(Math.max(1, (cfg.opTimeoutMs() + 999) / 1000)));
    p.setProperty("sslmode", "disable");
    if (cfg.flag("pooled")) p.setProperty("prepareThreshold", "0");
    this.conn = DriverManager.getConnection("jdbc:postgresql://" + cfg.lockAddrs().get(0) + "/" + cfg.str("database"), p);
    conn.setAutoCommit(true);
    conn.createStatement().execute("CREATE SEQUENCE IF NOT EXISTS kit_token");
    this.rng = new Random(cfg.seed() * 1000003 + cfg.process());
  }

  static long keyId(String key) {
    return ("kit:" + key).hashCode();
  }

  long one(String sql, long arg) throws SQLException {
    try (PreparedStatement s = conn.prepareStatement(sql)) {
      if (sql.contains("?")) s.setLong(1, arg);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getObject(1) instanceof Boolean ? (r.getBoolean(1) ? 1 : 0) : r.getLong(1);
      }
    }
  }

  @Override
  public LockcheckKit.Grant acquire(String key, long deadline) throws Exception {
    while (true) {
      if (one("SELECT pg_try_advisory_lock(?)", keyId(key)) == 1) {
        long token = one("SELECT nextval('kit_token')", 0);
        return new LockcheckKit.Grant(String.format("p%d-%016x", cfg.process(), rng.nextLong()), token);
      }
      if (System.nanoTime() >= deadline) throw new LockcheckKit.NotAcquired();
      Thread.sleep(cfg.retryMs());
    }
  }

  @Override
  public boolean release(String key, LockcheckKit.Grant g) throws Exception {
    return one("SELECT pg_advisory_unlock(?)", keyId(key)) == 1;
  }

  @Override
  public void close() throws SQLException {
    conn.close();
  }

  public static void main(String[] args) {
    LockcheckKit.main(PostgresWorker::new);
  }
}
