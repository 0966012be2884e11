#!/usr/bin/env python3
"""A complete, minimal lockcheck worker (docs/worker-protocol.md), in
Python with no dependencies: the redis-set-px design (SET key owner NX PX
lease plus an INCR fencing token in one script; release by Lua
compare-and-delete), speaking RESP to Redis over plain sockets.

Run it with lockcheck:

    check conformance --worker-cmd "python3 docs/examples/worker.py"
    check run --lock redis-set-px --worker-cmd "python3 docs/examples/worker.py" --nemesis pause

stdout carries protocol lines only; say anything else on stderr.
"""

import json
import random
import socket
import sys
import time

PROTOCOL = 2  # the version this worker speaks; refuse any other

ACQUIRE = """if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2]) end return 0"""
RELEASE = """if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) end return 0"""
# The fenced resource: refuse a token lower than the highest seen.
FENCED_READ = """local max = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < max then return {0, max} end
redis.call('SET', KEYS[2], ARGV[1])
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}"""
FENCED_WRITE = """local max = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < max then return {0, max} end
redis.call('SET', KEYS[2], ARGV[1]) redis.call('SET', KEYS[1], ARGV[2])
return {1, tonumber(ARGV[1])}"""


class Fail(Exception):
    """The operation certainly had no effect: reply fail. Any other
    exception (a timeout, a connection lost mid-request) replies info."""

    def __init__(self, msg, value=None):
        super().__init__(msg)
        self.value = value


class Redis:
    """Just enough RESP: one connection, one command at a time."""

    def __init__(self, addr, timeout):
        host, port = addr.rsplit(":", 1)
        self.addr, self.timeout, self.sock, self.buf = (host, int(port)), timeout, None, b""

    def call(self, *args):
        if self.sock is None:
            try:
                self.sock = socket.create_connection(self.addr, timeout=self.timeout)
            except ConnectionRefusedError as e:
                raise Fail("connect %s:%d: %s" % (self.addr + (e,)))  # nothing was sent
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        try:
            self.sock.sendall(out)
            return self.reply()
        except Fail:
            raise
        except Exception:
            self.sock.close()  # the reply is lost: the outcome is unknown
            self.sock, self.buf = None, b""
            raise

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise Fail("redis: " + rest.decode())  # an error reply: no effect
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise ConnectionError("bad reply %r" % line)

    def eval(self, script, keys, *args):
        return self.call("EVAL", script, len(keys), *keys, *args)


class Worker:
    def __init__(self, cfg):
        if cfg.get("protocol") != PROTOCOL:
            raise Fail("protocol %s not supported (this worker speaks %d)" % (cfg.get("protocol"), PROTOCOL))
        if cfg.get("lock") != "redis-set-px":
            raise Fail("lock %s: this worker only runs redis-set-px" % cfg.get("lock"))
        if cfg.get("workload", "register") not in ("", "register"):
            raise Fail("workload %s: this worker only runs the register" % cfg.get("workload"))
        timeout = cfg["op_timeout_ms"] / 1000.0
        self.cfg = cfg
        self.lock = Redis(cfg["lock_addrs"][0], timeout)
        self.storage = Redis(cfg["storage_addr"], max(timeout, 1.0))
        self.rng = random.Random("%s-%s" % (cfg["seed"], cfg["process"]))

    def acquire(self, key):
        deadline = time.monotonic() + self.cfg["acquire_timeout_ms"] / 1000.0
        while True:
            owner = "p%d-%016x" % (self.cfg["process"], self.rng.getrandbits(64))
            token = self.lock.eval(ACQUIRE, [key, key + ":token"], owner, self.cfg["lease_ms"])
            if token > 0:
                return {"owner": owner, "token": token}
            if time.monotonic() >= deadline:
                raise Fail("lock not acquired: held by another client until the acquire timeout")
            time.sleep(self.cfg["retry_ms"] / 1000.0 * (0.5 + self.rng.random()))

    def cs(self, key, grant):
        keys, token = ["resource:" + key, "resource:" + key + ":max-token"], grant.get("token", 0)
        val = {"token": token}
        try:
            if self.cfg["fencing"]:
                ok, read = self.storage.eval(FENCED_READ, keys, token)
                if not ok:
                    val.update(rejected="read", max_token=read)
                    raise Fail("stale fencing token rejected by the resource", val)
            else:
                read = int(self.storage.call("GET", keys[0]) or 0)
        except Fail:
            raise
        except Exception as e:
            raise Fail("read %s: %s" % (keys[0], e), val)  # a read changes nothing
        val.update(read=read, wrote=read + 1)
        time.sleep(self.cfg["think_ms"] / 1000.0)
        if self.cfg["fencing"]:
            ok, top = self.storage.eval(FENCED_WRITE, keys, token, read + 1)
            if not ok:
                val.update(rejected="write", max_token=top)
                raise Fail("stale fencing token rejected by the resource", val)
        else:
            self.storage.call("SET", keys[0], read + 1)
        return val

    def release(self, key, grant):
        deleted = self.lock.eval(RELEASE, [key], grant.get("owner", ""))
        return {"released": deleted == 1}


def main():
    worker = None
    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req["id"], "type": "ok"}
        try:
            f = req["f"]
            if f == "open":
                worker = Worker(req.get("config") or {})
                reply["protocol"] = PROTOCOL
            elif f == "close":
                pass
            elif worker is None:
                raise Fail("not open")
            elif f == "acquire":
                reply["value"] = worker.acquire(req["key"])
            elif f == "cs":
                reply["value"] = worker.cs(req["key"], req.get("value") or {})
            elif f == "release":
                reply["value"] = worker.release(req["key"], req.get("value") or {})
            else:
                raise Fail("unknown request %r" % f)
        except Exception as e:
            reply["type"] = "fail" if isinstance(e, Fail) else "info"
            reply["error"] = "%s: %s" % (type(e).__name__, e)
            if getattr(e, "value", None):
                reply["value"] = e.value
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if req.get("f") == "close":
            return


if __name__ == "__main__":
    main()
