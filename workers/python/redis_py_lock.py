"""lockcheck worker for redis-py's Lock (Debian python3-redis), design
redis-py-lock: Redis.lock(key, timeout=lease, sleep=retry,
blocking_timeout=acquire timeout), acquire(token=owner), release().

The lock is SET NX PX with a random token and a Lua compare-and-delete
release; redis-py has no fencing token (the design's Tokens is false) and
no watchdog (Lock.extend/reacquire are there for work longer than the
lease; the critical section here is far shorter). Errors: acquire returning
False (blocking_timeout passed) is fail; a refused connection or an error
reply is fail; a timeout or a connection lost mid-request is info.
LockNotOwnedError on release means the key had expired or was another
owner's: released false.
"""

import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lockcheck_worker as lw  # noqa: E402

lw.check_imports("redis")

import redis  # noqa: E402
from redis.exceptions import ConnectionError, LockNotOwnedError, ResponseError, TimeoutError  # noqa: E402


def classify(e):
    """fail for what certainly had no effect, else info."""
    if isinstance(e, TimeoutError):
        return "info"
    if isinstance(e, ResponseError):
        return "fail"
    if isinstance(e, ConnectionError):
        msg = str(e)
        if "Connection refused" in msg or ("Error %d " % errno.ECONNREFUSED) in msg or "connecting to" in msg:
            return "fail"  # the command was never sent
    return "info"


class RedisPyLock:
    def __init__(self, cfg, rng):
        if not cfg.get("lock_addrs"):
            raise lw.Definite("redis-py-lock needs one lock node address")
        host, port = lw.split_addr(cfg["lock_addrs"][0])
        op = cfg.get("op_timeout_ms", 500) / 1000.0
        self.r = redis.Redis(host=host, port=port, socket_timeout=op, socket_connect_timeout=op,
                             retry_on_timeout=False)
        self.cfg, self.rng, self.held = cfg, rng, {}

    def acquire(self, key):
        owner = lw.new_owner(self.cfg, self.rng)
        lk = self.r.lock(key, timeout=self.cfg["lease_ms"] / 1000.0, sleep=self.cfg.get("retry_ms", 10) / 1000.0,
                         blocking_timeout=self.cfg.get("acquire_timeout_ms", 2000) / 1000.0, thread_local=False)
        if not lk.acquire(token=owner):
            raise lw.NotAcquired("lock not acquired: held by another client until the acquire timeout")
        self.held[key] = lk
        return {"owner": owner, "token": 0}

    def release(self, key, grant):
        lk = self.held.pop(key, None)
        if lk is None:
            raise lw.Definite("release %s: not held by this client" % key)
        try:
            lk.release()
        except LockNotOwnedError:
            return {"released": False}
        return {"released": True}

    def close(self):
        self.r.close()


if __name__ == "__main__":
    sys.exit(lw.serve(RedisPyLock, classify))
