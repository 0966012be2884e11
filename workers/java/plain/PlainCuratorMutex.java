// PlainCuratorMutex is a plain loop with Apache Curator's InterProcessMutex
// (Debian libcurator-recipes-java), for `check bench --lock curator-mutex`:
// what a user of the library writes, with no lockcheck harness around it.
// One JVM, one thread per worker, each with its own CuratorFramework client
// (session timeout = lease, as the worker has): acquire(acquire timeout) of
// an InterProcessMutex on /lockcheck/k0, the critical section (GET the
// register on the storage node, sleep think, SET it to read+1), release(),
// until the time is up. The time starts once every client is connected.
//
// Input (stdin): {"seconds": S, "workers": [CONFIG, ...]}, one worker
// config per thread as the harness sends its workers at open
// (docs/worker-protocol.md). Output (stdout): {"grants": N}. --check exits
// 0 when Curator loads.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class PlainCuratorMutex {
  /** GET and SET on the storage node over one connection (RESP). */
  static class Storage {
    final Socket sock;
    final InputStream in;
    final OutputStream out;

    Storage(String addr, int timeoutMs) throws IOException {
      int i = addr.lastIndexOf(':');
      sock = new Socket();
      sock.connect(new InetSocketAddress(addr.substring(0, i), Integer.parseInt(addr.substring(i + 1))), timeoutMs);
      sock.setSoTimeout(timeoutMs);
      in = sock.getInputStream();
      out = sock.getOutputStream();
    }

    String call(String... args) throws IOException {
      StringBuilder b = new StringBuilder("*" + args.length + "\r\n");
      for (String a : args) {
        b.append("$").append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
      }
      out.write(b.toString().getBytes(StandardCharsets.UTF_8));
      out.flush();
      String l = line();
      if (l.startsWith("$")) {
        int n = Integer.parseInt(l.substring(1));
        if (n < 0) return null;
        byte[] x = in.readNBytes(n + 2);
        return new String(x, 0, n, StandardCharsets.UTF_8);
      }
      if (l.startsWith("-")) throw new IOException("redis: " + l.substring(1));
      return l.substring(1);
    }

    String line() throws IOException {
      StringBuilder b = new StringBuilder();
      int c;
      while ((c = in.read()) != -1) {
        if (c == '\n') return b.substring(0, b.length() - 1);
        b.append((char) c);
      }
      throw new IOException("connection closed by the server");
    }
  }

  /** Set by main once every thread's client is connected; the time starts then. */
  static volatile long deadline;

  static void loop(JsonNode cfg, CountDownLatch ready, CountDownLatch go, AtomicLong grants) throws Exception {
    List<String> hosts = new ArrayList<>();
    cfg.path("lock_addrs").forEach(a -> hosts.add(a.asText()));
    int op = cfg.path("op_timeout_ms").asInt(500);
    long wait = cfg.path("acquire_timeout_ms").asLong(2000);
    long think = cfg.path("think_ms").asLong(0);
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(String.join(",", hosts))
            .sessionTimeoutMs(cfg.path("lease_ms").asInt(1000))
            .connectionTimeoutMs(Math.max(op, 1000))
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
    client.start();
    try {
      client.blockUntilConnected(30, TimeUnit.SECONDS);
      Storage s = new Storage(cfg.path("storage_addr").asText(), Math.max(op, 1000));
      InterProcessMutex m = new InterProcessMutex(client, "/lockcheck/k0");
      ready.countDown();
      go.await();
      while (System.nanoTime() < deadline) {
        if (!m.acquire(wait, TimeUnit.MILLISECONDS)) continue;
        grants.incrementAndGet();
        try {
          String v = s.call("GET", "resource:k0");
          long n = v == null ? 0 : Long.parseLong(v);
          Thread.sleep(think);
          s.call("SET", "resource:k0", Long.toString(n + 1));
        } finally {
          m.release();
        }
      }
    } finally {
      client.close();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--check")) {
      Class.forName("org.apache.curator.framework.recipes.locks.InterProcessMutex");
      return;
    }
    JsonNode spec = new ObjectMapper().readTree(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
    AtomicLong grants = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    CountDownLatch ready = new CountDownLatch(spec.path("workers").size()), go = new CountDownLatch(1);
    for (JsonNode cfg : spec.path("workers")) {
      Thread t =
          new Thread(
              () -> {
                try {
                  loop(cfg, ready, go, grants);
                } catch (Exception e) {
                  System.err.println("plain loop: " + e);
                }
                ready.countDown(); // a thread that failed to connect does not hold the others back
              });
      t.start();
      threads.add(t);
    }
    // The time starts when every client is connected, as the harness's
    // starts when every worker has answered open.
    ready.await();
    deadline = System.nanoTime() + (long) (spec.path("seconds").asDouble() * 1e9);
    go.countDown();
    for (Thread t : threads) t.join();
    System.out.println("{\"grants\": " + grants.get() + "}");
  }
}
