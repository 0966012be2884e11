// LockcheckKit is lockcheck's worker kit for Java, JDK only: it speaks the
// worker protocol (docs/worker-protocol.md) on stdin and stdout, so that a
// worker for your own lock client is its acquire and release and nothing
// else. Compile it beside your worker and call LockcheckKit.main:
//
//   public class MyWorker {
//     public static void main(String[] args) {
//       LockcheckKit.main(cfg -> new MyLock(cfg));   // MyLock implements LockcheckKit.Lock
//     }
//   }
//
// Completions: throw LockcheckKit.Definite (or NotAcquired) when a request
// certainly had no effect (fail); any other exception, a timeout above all,
// replies info. The kit runs the critical section on the protected
// resource itself, fenced as the protocol's contract states when the run
// asks for fencing. System.out is handed to stderr: the protocol keeps the
// real stdout to itself. Every request runs on the main thread (some lock
// clients, Curator's InterProcessMutex, belong to the thread that
// acquired them).

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public final class LockcheckKit {
  /** The worker protocol version the kit speaks. */
  public static final int PROTOCOL = 2;

  /** Set by a test only: leaves the fencing check out of the resource. */
  public static boolean unfenced = false;

  private LockcheckKit() {}

  /** What an acquire got: a value unique to the grant, and the fencing token (0 for none). */
  public static final class Grant {
    public final String owner;
    public final long token;

    public Grant(String owner, long token) {
      this.owner = owner;
      this.token = token;
    }
  }

  /** Your lock client, one per worker process. */
  public interface Lock {
    /** Takes the lock on key, retrying until deadline (System.nanoTime()). */
    Grant acquire(String key, long deadline) throws Exception;

    /** Gives it back; true when it still held it (false: it had been lost). */
    boolean release(String key, Grant grant) throws Exception;

    /** Throws when the lock may be lost, before each access of the critical section. */
    default void check(String key, Grant grant) throws Exception {}

    default void close() throws Exception {}
  }

  /** Builds the lock client from the open request's config. */
  public interface Factory {
    Lock open(Config cfg) throws Exception;
  }

  /** The request certainly had no effect: the kit replies fail. */
  public static class Definite extends Exception {
    final Map<String, Object> value;

    public Definite(String msg) {
      this(msg, null);
    }

    Definite(String msg, Map<String, Object> value) {
      super(msg);
      this.value = value;
    }
  }

  /** The lock was held by others for the whole acquire timeout. */
  public static class NotAcquired extends Definite {
    public NotAcquired() {
      super("lock not acquired: held by another client until the acquire timeout");
    }
  }

  /** The open request's config (docs/worker-protocol.md lists every field). */
  public static final class Config {
    public final Map<String, Object> raw;

    Config(Map<String, Object> raw) {
      this.raw = raw;
    }

    public String str(String field) {
      Object v = raw.get(field);
      return v == null ? "" : v.toString();
    }

    public long num(String field, long def) {
      Object v = raw.get(field);
      return v instanceof Number ? ((Number) v).longValue() : def;
    }

    public boolean flag(String field) {
      return Boolean.TRUE.equals(raw.get(field));
    }

    @SuppressWarnings("unchecked")
    public List<String> lockAddrs() {
      List<String> out = new ArrayList<>();
      Object v = raw.get("lock_addrs");
      if (v instanceof List) {
        for (Object a : (List<Object>) v) out.add(a.toString());
      }
      return out;
    }

    public String lock() { return str("lock"); }
    public int process() { return (int) num("process", 0); }
    public long seed() { return num("seed", 0); }
    public long leaseMs() { return num("lease_ms", 1000); }
    public long opTimeoutMs() { return num("op_timeout_ms", 500); }
    public long retryMs() { return num("retry_ms", 10); }
    public long thinkMs() { return num("think_ms", 10); }
    public long acquireTimeoutMs() { return num("acquire_timeout_ms", 2000); }
  }

  private static final ExecutorService BOUNDED = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "lockcheck-kit-bounded");
    t.setDaemon(true);
    return t;
  });

  /**
   * Runs call on another thread and returns its result, or throws a
   * TimeoutException (a reply of info) when it has not returned within
   * millis: for a client call that can wait through a partition.
   */
  public static <T> T bounded(long millis, Callable<T> call) throws Exception {
    Future<T> f = BOUNDED.submit(call);
    try {
      return f.get(millis, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof Exception) throw (Exception) c;
      throw e;
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new TimeoutException("no answer within " + millis + " ms");
    }
  }

  // The fenced resource's contract (docs/worker-protocol.md): the register
  // of lock key k is resource:k, the highest token seen resource:k:max-token;
  // each access refuses a lower token, atomically, and raises the highest.
  static final String FENCED_READ =
      "local max = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
          + "local t = tonumber(ARGV[1])\n"
          + "if t < max then return {0, max} end\n"
          + "redis.call('SET', KEYS[2], t)\n"
          + "return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}";
  static final String FENCED_WRITE =
      "local max = tonumber(redis.call('GET', KEYS[2]) or '0')\n"
          + "local t = tonumber(ARGV[1])\n"
          + "if t < max then return {0, max} end\n"
          + "redis.call('SET', KEYS[2], t)\n"
          + "redis.call('SET', KEYS[1], ARGV[2])\n"
          + "return {1, t}";

  /** Just enough RESP for a Redis server: one connection, made again after an error. */
  public static final class Resp {
    private final String host;
    private final int port;
    private final int timeoutMs;
    private Socket sock;
    private InputStream in;

    public Resp(String addr, int timeoutMs) {
      int i = addr.lastIndexOf(':');
      this.host = addr.substring(0, i);
      this.port = Integer.parseInt(addr.substring(i + 1));
      this.timeoutMs = timeoutMs;
    }

    /**
     * Sends one command and returns its reply: a String, a Long, a List or
     * null. An error reply throws Definite (the command did not run); a
     * refused connection throws Definite; anything else (a timeout)
     * closes the connection and is uncertain.
     */
    public Object call(Object... args) throws Exception {
      if (sock == null) {
        Socket s = new Socket();
        try {
          s.connect(new InetSocketAddress(host, port), timeoutMs);
        } catch (java.net.ConnectException e) {
          s.close();
          throw new Definite("connect " + host + ":" + port + ": " + e.getMessage());
        }
        s.setSoTimeout(timeoutMs);
        sock = s;
        in = new java.io.BufferedInputStream(s.getInputStream());
      }
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      b.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
      for (Object a : args) {
        byte[] v = String.valueOf(a).getBytes(StandardCharsets.UTF_8);
        b.write(("$" + v.length + "\r\n").getBytes(StandardCharsets.UTF_8));
        b.write(v);
        b.write("\r\n".getBytes(StandardCharsets.UTF_8));
      }
      try {
        sock.getOutputStream().write(b.toByteArray());
        return reply();
      } catch (Definite e) {
        throw e;
      } catch (Exception e) {
        close();
        throw e;
      }
    }

    public void close() {
      if (sock != null) {
        try {
          sock.close();
        } catch (IOException ignored) {
        }
      }
      sock = null;
    }

    private String line() throws IOException {
      StringBuilder s = new StringBuilder();
      int c;
      while ((c = in.read()) != '\r') {
        if (c < 0) throw new IOException("connection closed by the server");
        s.append((char) c);
      }
      in.read();
      return s.toString();
    }

    private Object reply() throws Exception {
      String l = line();
      char kind = l.charAt(0);
      String rest = l.substring(1);
      switch (kind) {
        case '+':
          return rest;
        case '-':
          throw new Definite("redis: " + rest);
        case ':':
          return Long.parseLong(rest);
        case '$': {
          int n = Integer.parseInt(rest);
          if (n < 0) return null;
          byte[] buf = in.readNBytes(n + 2);
          if (buf.length < n + 2) throw new IOException("connection closed by the server");
          return new String(buf, 0, n, StandardCharsets.UTF_8);
        }
        case '*': {
          int n = Integer.parseInt(rest);
          List<Object> out = new ArrayList<>();
          for (int i = 0; i < n; i++) out.add(reply());
          return out;
        }
        default:
          throw new IOException("bad reply " + l);
      }
    }
  }

  private static final class Worker {
    final Config cfg;
    final Lock lock;
    final Resp storage;

    Worker(Config cfg, Factory f) throws Exception {
      if (cfg.num("protocol", 0) != PROTOCOL) {
        throw new Definite("protocol " + cfg.num("protocol", 0) + " not supported (this worker speaks " + PROTOCOL + ")");
      }
      String w = cfg.str("workload");
      if (!w.isEmpty() && !w.equals("register")) {
        throw new Definite("workload " + w + ": the kit runs the register workload only");
      }
      this.cfg = cfg;
      this.storage = new Resp(cfg.str("storage_addr"), (int) Math.max(cfg.opTimeoutMs(), 1000));
      try {
        this.lock = f.open(cfg);
      } catch (Definite e) {
        throw e;
      } catch (Exception e) {
        throw new Definite("open " + cfg.lock() + ": " + e);
      }
    }

    Map<String, Object> acquire(String key) throws Exception {
      Grant g = lock.acquire(key, System.nanoTime() + cfg.acquireTimeoutMs() * 1_000_000L);
      if (g == null || g.owner == null || g.owner.isEmpty()) {
        throw new Exception("the lock client returned no owner");
      }
      Map<String, Object> v = new LinkedHashMap<>();
      v.put("owner", g.owner);
      v.put("token", g.token);
      return v;
    }

    Map<String, Object> release(String key, Grant g) throws Exception {
      Map<String, Object> v = new LinkedHashMap<>();
      v.put("released", lock.release(key, g));
      return v;
    }

    void check(String key, Grant g) throws Exception {
      try {
        lock.check(key, g);
      } catch (Definite e) {
        throw e;
      } catch (Exception e) {
        throw new Definite("the lock may be lost: " + e.getMessage());
      }
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> cs(String key, Grant g) throws Exception {
      String reg = "resource:" + key, max = reg + ":max-token";
      boolean fenced = cfg.flag("fencing") && !unfenced;
      Map<String, Object> v = new LinkedHashMap<>();
      v.put("token", g.token);
      check(key, g);
      long read;
      try {
        if (fenced) {
          List<Object> r = (List<Object>) storage.call("EVAL", FENCED_READ, 2, reg, max, g.token);
          if ((Long) r.get(0) == 0) {
            v.put("rejected", "read");
            v.put("max_token", r.get(1));
            throw new Definite("stale fencing token rejected by the resource", v);
          }
          read = (Long) r.get(1);
        } else {
          Object s = storage.call("GET", reg);
          read = s == null ? 0 : Long.parseLong((String) s);
        }
      } catch (Definite e) {
        throw e;
      } catch (Exception e) {
        throw new Definite("read " + reg + ": " + e, v); // a read changes nothing
      }
      v.put("read", read);
      v.put("wrote", read + 1);
      Thread.sleep(cfg.thinkMs());
      check(key, g);
      if (fenced) {
        List<Object> r = (List<Object>) storage.call("EVAL", FENCED_WRITE, 2, reg, max, g.token, read + 1);
        if ((Long) r.get(0) == 0) {
          v.put("rejected", "write");
          v.put("max_token", r.get(1));
          throw new Definite("stale fencing token rejected by the resource", v);
        }
      } else {
        storage.call("SET", reg, read + 1);
      }
      return v;
    }

    void close() {
      try {
        lock.close();
      } catch (Exception ignored) {
      }
      storage.close();
    }
  }

  /** Serves stdin and stdout with factory until close or the end of stdin, then exits 0. */
  public static void main(Factory factory) {
    PrintStream protocol = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    try {
      serve(factory, System.in, protocol);
    } catch (Exception e) {
      System.err.println("worker: " + e);
      System.exit(3);
    }
    System.exit(0);
  }

  /** Serves the protocol from in to out until close or the end of in. */
  @SuppressWarnings("unchecked")
  public static void serve(Factory factory, InputStream in, OutputStream out) throws Exception {
    BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    PrintStream w = new PrintStream(out, true, StandardCharsets.UTF_8);
    Worker worker = null;
    try {
      String line;
      while ((line = r.readLine()) != null) {
        Map<String, Object> req = (Map<String, Object>) Json.parse(line);
        Map<String, Object> rep = new LinkedHashMap<>();
        rep.put("id", req.get("id"));
        rep.put("type", "ok");
        String f = String.valueOf(req.get("f"));
        String key = req.get("key") == null ? "" : req.get("key").toString();
        try {
          if (f.equals("open")) {
            if (worker != null) {
              worker.close();
              worker = null;
            }
            Object c = req.get("config");
            worker = new Worker(new Config(c instanceof Map ? (Map<String, Object>) c : new LinkedHashMap<>()), factory);
            rep.put("protocol", PROTOCOL);
          } else if (f.equals("close")) {
            // reply, then return
          } else if (worker == null) {
            throw new Definite("not open");
          } else if (f.equals("acquire") || f.equals("cs") || f.equals("release")) {
            Map<String, Object> gv = req.get("value") instanceof Map ? (Map<String, Object>) req.get("value") : Map.of();
            Grant g = new Grant(gv.get("owner") == null ? "" : gv.get("owner").toString(),
                gv.get("token") instanceof Number ? ((Number) gv.get("token")).longValue() : 0);
            if (f.equals("acquire")) rep.put("value", worker.acquire(key));
            else if (f.equals("cs")) rep.put("value", worker.cs(key, g));
            else rep.put("value", worker.release(key, g));
          } else {
            throw new Definite("unknown request " + f);
          }
        } catch (Exception e) {
          rep.put("type", e instanceof Definite ? "fail" : "info");
          rep.put("error", (key.isEmpty() ? "" : f + " " + key + ": ") + e);
          if (e instanceof Definite && ((Definite) e).value != null) rep.put("value", ((Definite) e).value);
        }
        w.println(Json.write(rep));
        if (f.equals("close")) return;
      }
    } finally {
      if (worker != null) worker.close();
    }
  }

  /** A small JSON reader and writer: objects, arrays, strings, numbers, booleans, null. */
  static final class Json {
    private final String s;
    private int i;

    private Json(String s) {
      this.s = s;
    }

    static Object parse(String s) {
      Json j = new Json(s);
      Object v = j.value();
      j.ws();
      if (j.i != s.length()) throw new IllegalArgumentException("trailing data at " + j.i);
      return v;
    }

    private void ws() {
      while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
    }

    private Object value() {
      ws();
      if (i >= s.length()) throw new IllegalArgumentException("unexpected end");
      char c = s.charAt(i);
      if (c == '{') {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        ws();
        if (s.charAt(i) == '}') {
          i++;
          return m;
        }
        while (true) {
          ws();
          String k = string();
          ws();
          expect(':');
          m.put(k, value());
          ws();
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect('}');
          return m;
        }
      }
      if (c == '[') {
        i++;
        List<Object> l = new ArrayList<>();
        ws();
        if (s.charAt(i) == ']') {
          i++;
          return l;
        }
        while (true) {
          l.add(value());
          ws();
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect(']');
          return l;
        }
      }
      if (c == '"') return string();
      if (s.startsWith("true", i)) {
        i += 4;
        return Boolean.TRUE;
      }
      if (s.startsWith("false", i)) {
        i += 5;
        return Boolean.FALSE;
      }
      if (s.startsWith("null", i)) {
        i += 4;
        return null;
      }
      int start = i;
      while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
      String n = s.substring(start, i);
      if (n.isEmpty()) throw new IllegalArgumentException("unexpected " + c + " at " + start);
      if (n.contains(".") || n.contains("e") || n.contains("E")) return Double.parseDouble(n);
      return Long.parseLong(n);
    }

    private void expect(char c) {
      if (i >= s.length() || s.charAt(i) != c) throw new IllegalArgumentException("want " + c + " at " + i);
      i++;
    }

    private String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = s.charAt(i++);
        if (c == '"') return b.toString();
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = s.charAt(i++);
        switch (e) {
          case 'n': b.append('\n'); break;
          case 't': b.append('\t'); break;
          case 'r': b.append('\r'); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
          default: b.append(e);
        }
      }
    }

    @SuppressWarnings("unchecked")
    static String write(Object v) {
      if (v == null) return "null";
      if (v instanceof String) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : ((String) v).toCharArray()) {
          if (c == '"' || c == '\\') b.append('\\').append(c);
          else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
        return b.append('"').toString();
      }
      if (v instanceof Map) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
          if (b.length() > 1) b.append(',');
          b.append(write(e.getKey())).append(':').append(write(e.getValue()));
        }
        return b.append('}').toString();
      }
      if (v instanceof List) {
        StringBuilder b = new StringBuilder("[");
        for (Object o : (List<Object>) v) {
          if (b.length() > 1) b.append(',');
          b.append(write(o));
        }
        return b.append(']').toString();
      }
      return v.toString();
    }
  }
}
