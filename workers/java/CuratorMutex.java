// CuratorMutex is the lockcheck worker (docs/worker-protocol.md) for Apache
// Curator's InterProcessMutex (Debian libcurator-recipes-java), design
// curator-mutex. The controller compiles it with javac on first use and runs
// it with java -cp (package workers).
//
// As Curator's users call it: one CuratorFramework per worker
// (sessionTimeoutMs = lease, ExponentialBackoffRetry(100 ms, 3)), one
// InterProcessMutex per key on /lockcheck/<key>, acquire(acquire timeout),
// release(). ConnectionStateListener states (SUSPENDED, LOST, RECONNECTED)
// are reported as events, and, as Curator's tech notes ask of a lock holder,
// an access is refused once the connection was SUSPENDED or LOST since the
// grant. With --lost-only (design curator-mutex-lost-only) only LOST ends
// the lock, as Curator's SessionConnectionStateErrorPolicy has its leader
// recipes decide: SUSPENDED is reported and the holder goes on. The fencing token is the czxid of the mutex's own lock node
// (getLockPath). Every request runs on the main thread: InterProcessMutex
// is owned by the thread that acquired it.
//
// Completions: acquire returning false is fail (Curator deletes its node on a
// timeout); an exception from acquire or release is info (Curator retries
// internally, so its outcome is unknown); a refused check or a failed read
// of the resource is fail; a failed write is info.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.data.Stat;

public class CuratorMutex {
  static final int PROTOCOL = 2;
  static final ObjectMapper JSON = new ObjectMapper();
  static PrintStream out;

  /** Fail means the operation certainly had no effect. */
  static class Fail extends Exception {
    final ObjectNode value;

    Fail(String msg, ObjectNode value) {
      super(msg);
      this.value = value;
    }
  }

  /** A mutex that writes the owner into its node and shows its node's path. */
  static class Mutex extends InterProcessMutex {
    String owner = "";

    Mutex(CuratorFramework c, String path) {
      super(c, path);
    }

    @Override
    protected byte[] getLockNodeBytes() {
      return owner.getBytes(StandardCharsets.UTF_8);
    }

    String path() {
      return getLockPath();
    }
  }

  static synchronized void emit(ObjectNode o) {
    out.println(o.toString());
    out.flush();
  }

  static void event(String name, String detail) {
    ObjectNode e = JSON.createObjectNode();
    e.put("event", name);
    e.putObject("value").put("detail", detail);
    emit(e);
  }

  /** Just enough RESP for the storage node: one connection, one command at a time. */
  static class Redis {
    final String host;
    final int port, timeoutMs;
    Socket sock;
    InputStream in;

    Redis(String addr, int timeoutMs) {
      int i = addr.lastIndexOf(':');
      host = addr.substring(0, i);
      port = Integer.parseInt(addr.substring(i + 1));
      this.timeoutMs = timeoutMs;
    }

    Object call(Object... args) throws Exception {
      if (sock == null) {
        Socket s = new Socket();
        try {
          s.connect(new InetSocketAddress(host, port), timeoutMs);
        } catch (ConnectException e) {
          throw new Fail("connect " + host + ":" + port + ": " + e.getMessage(), null);
        }
        s.setSoTimeout(timeoutMs);
        sock = s;
        in = s.getInputStream();
      }
      StringBuilder b = new StringBuilder("*" + args.length + "\r\n");
      for (Object a : args) {
        byte[] x = a.toString().getBytes(StandardCharsets.UTF_8);
        b.append("$").append(x.length).append("\r\n").append(a).append("\r\n");
      }
      try {
        OutputStream o = sock.getOutputStream();
        o.write(b.toString().getBytes(StandardCharsets.UTF_8));
        o.flush();
        return reply();
      } catch (Fail f) {
        throw f;
      } catch (Exception e) {
        sock.close();
        sock = null;
        throw e;
      }
    }

    String line() throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      int c, prev = -1;
      while ((c = in.read()) != -1) {
        if (prev == '\r' && c == '\n') {
          byte[] x = b.toByteArray();
          return new String(x, 0, x.length - 1, StandardCharsets.UTF_8);
        }
        b.write(c);
        prev = c;
      }
      throw new IOException("connection closed by the server");
    }

    Object reply() throws Exception {
      String l = line();
      char k = l.charAt(0);
      String rest = l.substring(1);
      switch (k) {
        case '-':
          throw new Fail("redis: " + rest, null);
        case '+':
          return rest;
        case ':':
          return Long.parseLong(rest);
        case '$':
          int n = Integer.parseInt(rest);
          if (n < 0) return null;
          byte[] x = in.readNBytes(n + 2);
          return new String(x, 0, n, StandardCharsets.UTF_8);
        case '*':
          List<Object> xs = new ArrayList<>();
          for (int i = Integer.parseInt(rest); i > 0; i--) xs.add(reply());
          return xs;
      }
      throw new IOException("bad reply " + l);
    }
  }

  static final String FENCED_READ =
      "local max = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
          + "if tonumber(ARGV[1]) < max then return {0, max} end\n"
          + "redis.call('SET', KEYS[2], ARGV[1])\n"
          + "return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}";
  static final String FENCED_WRITE =
      "local max = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
          + "if tonumber(ARGV[1]) < max then return {0, max} end\n"
          + "redis.call('SET', KEYS[2], ARGV[1]) redis.call('SET', KEYS[1], ARGV[2])\n"
          + "return {1, tonumber(ARGV[1])}";

  final JsonNode cfg;
  final CuratorFramework client;
  final Redis storage;
  final Random rng;
  final Map<String, Mutex> mutexes = new HashMap<>();
  final Map<String, Integer> heldAt = new HashMap<>();
  static boolean lostOnly; // --lost-only: only LOST ends a lock
  volatile int troubles; // SUSPENDED or LOST seen so far (LOST only, with --lost-only)
  volatile boolean connected = true;

  CuratorMutex(JsonNode cfg) throws Exception {
    this.cfg = cfg;
    int lease = cfg.path("lease_ms").asInt(1000);
    int op = cfg.path("op_timeout_ms").asInt(500);
    List<String> hosts = new ArrayList<>();
    cfg.path("lock_addrs").forEach(a -> hosts.add(a.asText()));
    rng = new Random(cfg.path("seed").asLong() * 1000003 + cfg.path("process").asLong());
    client =
        CuratorFrameworkFactory.builder()
            .connectString(String.join(",", hosts))
            .sessionTimeoutMs(lease)
            .connectionTimeoutMs(Math.max(op, 1000))
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    client
        .getConnectionStateListenable()
        .addListener(
            (c, s) -> {
              long sid = 0;
              try {
                sid = c.getZookeeperClient().getZooKeeper().getSessionId();
              } catch (Exception e) {
                // no session to name
              }
              if (s == ConnectionState.LOST || (s == ConnectionState.SUSPENDED && !lostOnly)) {
                troubles++;
                connected = false;
              } else if (s.isConnected()) {
                connected = true;
              }
              String what =
                  s == ConnectionState.SUSPENDED
                      ? (lostOnly ? ": lock kept until LOST" : ": lock uncertain")
                      : s == ConnectionState.LOST ? ": session lost, lock lost" : "";
              event("session", String.format("curator session 0x%x %s%s", sid, s, what));
            });
    client.start();
    if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
      client.close();
      throw new Fail("no ZooKeeper connection within 10 s (" + hosts + ")", null);
    }
    storage = new Redis(cfg.path("storage_addr").asText(), Math.max(op, 1000));
  }

  ObjectNode acquire(String key) throws Exception {
    Mutex m = mutexes.computeIfAbsent(key, k -> new Mutex(client, "/lockcheck/" + k));
    m.owner = String.format("p%d-%016x", cfg.path("process").asInt(), rng.nextLong());
    int seen = troubles;
    if (!m.acquire(cfg.path("acquire_timeout_ms").asLong(2000), TimeUnit.MILLISECONDS)) {
      throw new Fail("lock not acquired: held by another client until the acquire timeout", null);
    }
    Stat st = client.checkExists().forPath(m.path());
    if (st == null) {
      throw new Exception("granted, but our lock node " + m.path() + " is gone");
    }
    heldAt.put(key, seen);
    ObjectNode v = JSON.createObjectNode();
    v.put("owner", m.owner);
    v.put("token", st.getCzxid());
    return v;
  }

  void check(String key, ObjectNode val) throws Fail {
    Integer seen = heldAt.get(key);
    if (seen == null) throw new Fail("lock " + key + " not held", val);
    if (troubles != seen || !connected) {
      throw new Fail(
          lostOnly
              ? "lock lost: the session was LOST since the grant"
              : "lock uncertain: the connection was SUSPENDED or LOST since the grant",
          val);
    }
  }

  ObjectNode cs(String key, JsonNode grant) throws Exception {
    long token = grant.path("token").asLong(0);
    boolean fenced = cfg.path("fencing").asBoolean(false);
    String reg = "resource:" + key, max = reg + ":max-token";
    ObjectNode val = JSON.createObjectNode();
    val.put("token", token);
    check(key, val);
    long read;
    try {
      if (fenced) {
        List<?> r = (List<?>) storage.call("EVAL", FENCED_READ, 2, reg, max, token);
        if ((Long) r.get(0) == 0) {
          val.put("rejected", "read");
          val.put("max_token", (Long) r.get(1));
          throw new Fail("stale fencing token rejected by the resource", val);
        }
        read = (Long) r.get(1);
      } else {
        Object r = storage.call("GET", reg);
        read = r == null ? 0 : Long.parseLong(r.toString());
      }
    } catch (Fail f) {
      throw f;
    } catch (Exception e) {
      throw new Fail("read " + reg + ": " + e, val);
    }
    val.put("read", read);
    val.put("wrote", read + 1);
    Thread.sleep(cfg.path("think_ms").asLong(0));
    check(key, val);
    if (fenced) {
      List<?> r = (List<?>) storage.call("EVAL", FENCED_WRITE, 2, reg, max, token, read + 1);
      if ((Long) r.get(0) == 0) {
        val.put("rejected", "write");
        val.put("max_token", (Long) r.get(1));
        throw new Fail("stale fencing token rejected by the resource", val);
      }
    } else {
      storage.call("SET", reg, read + 1);
    }
    return val;
  }

  ObjectNode release(String key) throws Exception {
    Mutex m = mutexes.get(key);
    if (m == null || heldAt.remove(key) == null) throw new Fail("release " + key + ": not held by this client", null);
    boolean ours = client.checkExists().forPath(m.path()) != null;
    m.release();
    ObjectNode v = JSON.createObjectNode();
    v.put("released", ours);
    return v;
  }

  public static void main(String[] args) throws Exception {
    out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
    System.setOut(System.err); // only protocol lines on stdout
    if (args.length > 0 && args[0].equals("--check")) {
      Class.forName("org.apache.curator.framework.recipes.locks.InterProcessMutex");
      return;
    }
    lostOnly = args.length > 0 && args[0].equals("--lost-only");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    CuratorMutex w = null;
    String line;
    while ((line = in.readLine()) != null) {
      JsonNode req = JSON.readTree(line);
      String f = req.path("f").asText();
      String key = req.path("key").asText();
      ObjectNode reply = JSON.createObjectNode();
      reply.put("id", req.path("id").asLong());
      reply.put("type", "ok");
      try {
        switch (f) {
          case "open":
            JsonNode cfg = req.path("config");
            if (w != null) throw new Fail("already open", null);
            if (cfg.path("protocol").asInt() != PROTOCOL) {
              throw new Fail("protocol " + cfg.path("protocol") + " not supported (this worker speaks " + PROTOCOL + ")", null);
            }
            String wl = cfg.path("workload").asText("");
            if (!wl.isEmpty() && !wl.equals("register")) throw new Fail("workload " + wl + " not run by this worker", null);
            w = new CuratorMutex(cfg);
            reply.put("protocol", PROTOCOL);
            break;
          case "close":
            break;
          case "acquire":
            if (w == null) throw new Fail("not open", null);
            reply.set("value", w.acquire(key));
            break;
          case "cs":
            if (w == null) throw new Fail("not open", null);
            reply.set("value", w.cs(key, req.path("value")));
            break;
          case "release":
            if (w == null) throw new Fail("not open", null);
            reply.set("value", w.release(key));
            break;
          default:
            throw new Fail("unknown request " + f, null);
        }
      } catch (Exception e) {
        reply.put("type", e instanceof Fail ? "fail" : "info");
        reply.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
        if (e instanceof Fail && ((Fail) e).value != null) reply.set("value", ((Fail) e).value);
      }
      emit(reply);
      if (f.equals("close")) break;
    }
    if (w != null) w.client.close();
    System.exit(0);
  }
}
