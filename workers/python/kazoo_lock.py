"""lockcheck worker for kazoo's Lock (Debian python3-kazoo), design
kazoo-lock: KazooClient(hosts, timeout=lease) (the session timeout),
client.Lock("/lockcheck/<key>", owner).acquire(timeout=acquire timeout),
release().

Tokens: kazoo hands out none; the worker reads its lock node
(Lock.node) after the grant and takes the node's czxid. Session states
(SUSPENDED, LOST, CONNECTED) from the connection listener are reported as
events, and, as kazoo's documentation asks of a lock holder, the worker
refuses an access while the session is suspended or after it was lost
since the grant (valid). Errors: LockTimeout or False from acquire is fail
when the lock's node is gone afterwards (kazoo deletes it on a timeout),
info when it may remain; a connection loss or a call that did not return
within the session timeout is info; NoNodeError on release is released
false.
"""

import concurrent.futures
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lockcheck_worker as lw  # noqa: E402

lw.check_imports("kazoo", "redis")

from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import LockTimeout, NoNodeError, SessionExpiredError  # noqa: E402


class KazooLock:
    def __init__(self, cfg, rng):
        self.cfg, self.rng = cfg, rng
        self.lease = cfg["lease_ms"] / 1000.0
        self.op = cfg.get("op_timeout_ms", 500) / 1000.0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
        self.held = {}
        self.epoch = 0  # sessions lost so far
        self.connected = False
        self.zk = KazooClient(hosts=",".join(cfg["lock_addrs"]), timeout=self.lease)
        self.zk.add_listener(self.state)
        self.zk.start(timeout=10)
        self.connected = True
        self.zk.ensure_path("/lockcheck")

    def state(self, s):
        sid = "0x%x" % self.zk.client_id[0] if self.zk.client_id else "?"
        if s == KazooState.SUSPENDED:
            self.connected = False
            lw.event("session", "kazoo session %s SUSPENDED: lock uncertain" % sid)
        elif s == KazooState.LOST:
            self.connected = False
            self.epoch += 1
            lw.event("session", "kazoo session %s LOST: expired, lock lost" % sid)
        else:
            self.connected = True
            lw.event("session", "kazoo session %s CONNECTED" % sid)

    def call(self, f, *args, timeout=None):
        """Runs f, giving up (info) after the session timeout plus the op
        timeout: a kazoo call can wait through a partition."""
        fut = self.pool.submit(f, *args)
        return fut.result(timeout=timeout or (self.lease + self.op))

    def acquire(self, key):
        owner = lw.new_owner(self.cfg, self.rng)
        lk = self.zk.Lock("/lockcheck/" + key, owner)
        wait = self.cfg.get("acquire_timeout_ms", 2000) / 1000.0
        epoch = self.epoch
        try:
            got = self.call(lk.acquire, True, wait, timeout=wait + self.lease + self.op)
        except LockTimeout:
            got = False
        except SessionExpiredError as e:
            raise lw.Definite("acquire %s: %s" % (key, e))  # the session's nodes are gone
        if not got:
            if self.ours(lk):
                raise Exception("acquire %s: timed out and our lock node may remain" % key)
            raise lw.NotAcquired("lock not acquired: held by another client until the acquire timeout")
        st = self.call(self.zk.exists, lk.path + "/" + lk.node)
        if st is None:
            raise Exception("acquire %s: granted, but our node %s is gone" % (key, lk.node))
        self.held[key] = (lk, epoch)
        return {"owner": owner, "token": st.czxid}

    def ours(self, lk):
        """Whether a node of lk may remain after a failed acquire."""
        try:
            children = self.call(self.zk.get_children, lk.path)
        except Exception:
            return True
        return any(c.startswith(lk.prefix) for c in children)

    def valid(self, key):
        h = self.held.get(key)
        if h is None:
            raise lw.Definite("lock %s not held" % key)
        if self.epoch != h[1]:
            raise lw.Definite("lock lost: kazoo session LOST since the grant")
        if not self.connected:
            raise lw.Definite("lock uncertain: kazoo session SUSPENDED")

    def release(self, key, grant):
        h = self.held.pop(key, None)
        if h is None:
            raise lw.Definite("release %s: not held by this client" % key)
        lk = h[0]
        try:
            node = lk.path + "/" + lk.node
            self.call(self.zk.delete, node)
        except NoNodeError:
            return {"released": False}
        return {"released": True}

    def close(self):
        try:
            self.zk.stop()
            self.zk.close()
        finally:
            self.pool.shutdown(wait=False)


if __name__ == "__main__":
    sys.exit(lw.serve(KazooLock))
