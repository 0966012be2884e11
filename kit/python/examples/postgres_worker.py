#!/usr/bin/env python3
"""A kit worker for a PostgreSQL session advisory lock written with
psycopg2 (Debian's python3-psycopg2): pg_try_advisory_lock on a hash of
the key, retried until the acquire timeout, pg_advisory_unlock to release,
a fencing token from a sequence at the grant.

    check conformance --lock pg-advisory --worker-cmd "python3 kit/python/examples/postgres_worker.py"
"""

import os
import random
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import lockcheck_kit as kit  # noqa: E402
import psycopg2  # noqa: E402


def key_id(key):
    return zlib.crc32(("kit:" + key).encode())


class AdvisoryLock:
    def __init__(self, cfg):
        host, port = cfg["lock_addrs"][0].rsplit(":", 1)
        self.cfg = cfg
        self.conn = psycopg2.connect(host=host, port=int(port), user=cfg.get("user"), password=cfg.get("password") or None,
                                     dbname=cfg.get("database"), connect_timeout=max(1, int(cfg.op_timeout)),
                                     application_name=cfg.get("session_name", ""),
                                     options="-c statement_timeout=%d" % cfg.get("op_timeout_ms", 500))
        self.conn.autocommit = True
        with self.conn.cursor() as c:
            c.execute("CREATE SEQUENCE IF NOT EXISTS kit_token")
        self.rng = random.Random("%s-%s" % (cfg["seed"], cfg["process"]))

    def one(self, sql, *args):
        with self.conn.cursor() as c:
            c.execute(sql, args)
            return c.fetchone()[0]

    def acquire(self, key, deadline):
        while True:
            if self.one("SELECT pg_try_advisory_lock(%s)", key_id(key)):
                token = self.one("SELECT nextval('kit_token')")
                return kit.Grant("p%d-%016x" % (self.cfg["process"], self.rng.getrandbits(64)), token)
            if time.monotonic() >= deadline:
                raise kit.NotAcquired()
            time.sleep(self.cfg.retry)

    def release(self, key, grant):
        return self.one("SELECT pg_advisory_unlock(%s)", key_id(key))

    def close(self):
        self.conn.close()


if __name__ == "__main__":
    kit.main(AdvisoryLock)
