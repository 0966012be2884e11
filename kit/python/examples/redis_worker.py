#!/usr/bin/env python3
"""A kit worker for a Redis lock written with redis-py (Debian's
python3-redis): SET key owner NX PX lease and an INCR fencing token in one
script, released by a Lua compare-and-delete.

    check conformance --lock redis-set-px --worker-cmd "python3 kit/python/examples/redis_worker.py"
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lockcheck_kit as kit  # noqa: E402
import redis  # noqa: E402

ACQUIRE = """if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2]) end return 0"""
RELEASE = """if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end return 0"""


class RedisLock:
    def __init__(self, cfg):
        host, port = cfg["lock_addrs"][0].rsplit(":", 1)
        self.cfg = cfg
        self.r = redis.Redis(host=host, port=int(port), socket_timeout=cfg.op_timeout,
                             socket_connect_timeout=cfg.op_timeout, retry_on_timeout=False)
        self.acq, self.rel = self.r.register_script(ACQUIRE), self.r.register_script(RELEASE)
        self.rng = random.Random("%s-%s" % (cfg["seed"], cfg["process"]))

    def acquire(self, key, deadline):
        while True:
            owner = "p%d-%016x" % (self.cfg["process"], self.rng.getrandbits(64))
            try:
                token = self.acq(keys=[key, key + ":token"], args=[owner, self.cfg["lease_ms"]])
            except redis.exceptions.ResponseError as e:
                raise kit.Definite(str(e))  # an error reply: nothing ran
            if token:
                return kit.Grant(owner, int(token))
            if time.monotonic() >= deadline:
                raise kit.NotAcquired()
            time.sleep(self.cfg.retry)

    def release(self, key, grant):
        return self.rel(keys=[key], args=[grant.owner]) == 1

    def close(self):
        self.r.close()


if __name__ == "__main__":
    kit.main(RedisLock)
