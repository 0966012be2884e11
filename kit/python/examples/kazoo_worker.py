#!/usr/bin/env python3
"""A kit worker for kazoo's ZooKeeper lock recipe (Debian's
python3-kazoo): client.Lock(path).acquire(timeout), the token the czxid of
the lock's node; a session that was lost since the grant fails the
critical section's check.

    check conformance --lock zk-sequential --worker-cmd "python3 kit/python/examples/kazoo_worker.py"
"""

import logging
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lockcheck_kit as kit  # noqa: E402
from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import LockTimeout, NoNodeError  # noqa: E402

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)


class KazooLock:
    def __init__(self, cfg):
        self.cfg = cfg
        self.zk = KazooClient(hosts=",".join(cfg["lock_addrs"]), timeout=cfg.lease,
                              connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.2})
        self.lost = 0
        self.zk.add_listener(self.listen)
        self.zk.start(timeout=10)
        self.held = {}
        # A kazoo call waits through a cut for its session: give up (info)
        # after the session timeout and one command's bound.
        self.bound = cfg.lease + cfg.op_timeout
        self.rng = random.Random("%s-%s" % (cfg["seed"], cfg["process"]))

    def listen(self, state):
        if state != KazooState.CONNECTED:
            self.lost += 1  # SUSPENDED or LOST: a grant from before may be gone

    def acquire(self, key, deadline):
        owner = "p%d-%016x" % (self.cfg["process"], self.rng.getrandbits(64))
        lk = self.zk.Lock("/kit-lock/" + key, owner)
        wait = max(0.0, deadline - time.monotonic())
        try:
            got = kit.bounded(wait + self.bound, lk.acquire, True, wait)
        except LockTimeout:
            got = False
        if not got:
            # A node of ours may remain queued: not certain, so info.
            raise Exception("acquire %s: timed out" % key)
        st = kit.bounded(self.bound, self.zk.exists, lk.path + "/" + lk.node)
        if st is None:
            raise Exception("granted, but our node is gone")
        self.held[key] = (lk, self.lost)
        return kit.Grant(owner, st.czxid)

    def check(self, key, grant):
        h = self.held.get(key)
        if h is None or h[1] != self.lost:
            raise kit.Definite("lock %s may be lost: the session was suspended or lost since the grant" % key)

    def release(self, key, grant):
        h = self.held.pop(key, None)
        if h is None:
            return False
        try:
            kit.bounded(self.bound, h[0].release)
        except NoNodeError:
            return False
        return h[1] == self.lost

    def close(self):
        self.zk.stop()
        self.zk.close()


if __name__ == "__main__":
    kit.main(KazooLock)
