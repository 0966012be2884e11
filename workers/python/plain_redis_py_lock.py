"""A plain loop with redis-py's Lock (Debian python3-redis), for
`check bench --lock redis-py-lock`: what a user of the library writes, with
no lockcheck harness around it. One process, one thread per worker, each
with its own Redis client: Redis.lock(key, timeout=lease, sleep=retry,
blocking_timeout=acquire timeout), acquire(), the critical section (GET the
register on the storage node, sleep think, SET it to read+1), release(),
until the time is up. The time starts once every client has connected.

Input (stdin): {"seconds": S, "workers": [CONFIG, ...]}, one worker config
per thread as the harness sends its workers at open
(docs/worker-protocol.md). Output (stdout): {"grants": N}. --check exits 0
when redis-py imports.
"""

import json
import sys
import threading
import time


def loop(cfg, start, counts, i):
    import redis
    from redis.exceptions import LockError, RedisError

    host, port = cfg["lock_addrs"][0].rsplit(":", 1)
    op = cfg.get("op_timeout_ms", 500) / 1000.0
    r = redis.Redis(host=host, port=int(port), socket_timeout=op, socket_connect_timeout=op)
    shost, sport = cfg["storage_addr"].rsplit(":", 1)
    s = redis.Redis(host=shost, port=int(sport), socket_timeout=max(op, 1.0))
    lease = cfg["lease_ms"] / 1000.0
    retry = cfg.get("retry_ms", 10) / 1000.0
    wait = cfg.get("acquire_timeout_ms", 2000) / 1000.0
    think = cfg.get("think_ms", 0) / 1000.0
    try:
        r.ping()
        s.ping()
    finally:
        start.wait()  # every client connected (or failed to): the time starts
    deadline = start.deadline
    while time.monotonic() < deadline:
        lock = r.lock("k0", timeout=lease, sleep=retry, blocking_timeout=wait)
        try:
            if not lock.acquire():
                continue
        except RedisError:
            continue
        counts[i] += 1
        try:
            n = int(s.get("resource:k0") or 0)
            time.sleep(think)
            s.set("resource:k0", n + 1)
        except RedisError:
            pass
        try:
            lock.release()
        except (LockError, RedisError):
            pass
    r.close()
    s.close()


def main():
    if "--check" in sys.argv[1:]:
        import redis  # noqa: F401
        return 0
    spec = json.load(sys.stdin)
    workers = spec["workers"]
    counts = [0] * len(workers)

    def go():
        start.deadline = time.monotonic() + float(spec["seconds"])

    start = threading.Barrier(len(workers), action=go)
    threads = [threading.Thread(target=loop, args=(cfg, start, counts, i)) for i, cfg in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"grants": sum(counts)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
