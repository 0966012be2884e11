"""The worker side of lockcheck's worker protocol (docs/worker-protocol.md),
shared by the Python workers that ship with lockcheck (redis_py_lock.py,
kazoo_lock.py).

A worker script builds a lock object and calls serve(make_lock). The lock
object has acquire(key) -> dict (owner, token), release(key, grant) -> dict
(released), valid(key) (raises when the lock may be lost; optional, may be
None) and close(). An exception raised by acquire or release is the
operation's completion: Definite (and its subclasses) is fail, anything
else is info unless the lock's classify(exc) says "fail".

The protected resource (the register on the storage node, fenced or not)
is implemented here with redis-py, exactly as workloads/resource.go does.
Everything the worker prints goes to stderr; stdout carries protocol lines
only.
"""

import json
import logging
import random
import sys
import threading
import time

PROTOCOL = 2

logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                    format="%(asctime)s %(name)s %(levelname)s %(message)s")

_out = threading.Lock()


def emit(obj):
    """Writes one protocol line to stdout, whole (replies and events share
    stdout, so the write is under a lock)."""
    line = json.dumps(obj, separators=(",", ":"))
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def event(name, detail):
    """Reports something the lock client noticed on its own."""
    emit({"event": name, "value": {"detail": detail}})


class Definite(Exception):
    """The operation certainly had no effect: its completion is fail."""

    def __init__(self, msg, value=None):
        super().__init__(msg)
        self.value = value


class NotAcquired(Definite):
    """The lock was held by another client for the whole acquire timeout."""


class Rejected(Definite):
    """The fenced resource refused a stale token."""


FENCED_READ = """
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}"""

FENCED_WRITE = """
local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
redis.call('SET', KEYS[1], ARGV[2])
return {1, t}"""


def split_addr(addr):
    host, port = addr.rsplit(":", 1)
    return host, int(port)


class Resource:
    """The register resource:<key> on the storage node: read, think,
    write read+1; with fencing, both accesses carry the token and the
    storage refuses one lower than the highest it has seen."""

    def __init__(self, cfg):
        import redis
        host, port = split_addr(cfg["storage_addr"])
        timeout = max(cfg.get("op_timeout_ms", 500), 1000) / 1000.0
        self.r = redis.Redis(host=host, port=port, socket_timeout=timeout,
                             socket_connect_timeout=timeout, retry_on_timeout=False)
        self.think = cfg.get("think_ms", 0) / 1000.0
        self.fenced = bool(cfg.get("fencing"))
        self.read_script = self.r.register_script(FENCED_READ)
        self.write_script = self.r.register_script(FENCED_WRITE)

    def cs(self, key, token, check):
        keys = ["resource:" + key, "resource:" + key + ":max-token"]
        val = {"token": token}
        if check:
            check()
        try:
            if self.fenced:
                ok, n = self.read_script(keys=keys, args=[token])
                if not ok:
                    val.update(rejected="read", max_token=n)
                    raise Rejected("stale fencing token rejected by the resource", val)
                read = n
            else:
                read = int(self.r.get(keys[0]) or 0)
        except Rejected:
            raise
        except Exception as e:  # a read has no effect
            raise Definite("read %s: %s" % (keys[0], e), val)
        val.update(read=read, wrote=read + 1)
        time.sleep(self.think)
        if check:
            check()
        if self.fenced:
            ok, n = self.write_script(keys=keys, args=[token, read + 1])
            if not ok:
                val.update(rejected="write", max_token=n)
                raise Rejected("stale fencing token rejected by the resource", val)
        else:
            self.r.set(keys[0], read + 1)
        return val

    def close(self):
        self.r.close()


def serve(make_lock, classify=None):
    """Runs the protocol on stdin/stdout until close or the end of stdin.
    make_lock(cfg, rng) builds the lock client after a valid open."""
    lock, res = None, None
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            print("malformed request %r" % line, file=sys.stderr)
            return 3
        rid, f = req.get("id"), req.get("f")
        reply = {"id": rid, "type": "ok"}
        try:
            if f == "open":
                if lock is not None:
                    raise Definite("already open")
                cfg = req.get("config") or {}
                if cfg.get("protocol") != PROTOCOL:
                    raise Definite("protocol %s not supported (this worker speaks %d)" % (cfg.get("protocol"), PROTOCOL))
                if cfg.get("workload", "register") not in ("", "register"):
                    raise Definite("workload %s not run by this worker (register only)" % cfg.get("workload"))
                rng = random.Random("%s-%s" % (cfg.get("seed"), cfg.get("process")))
                lock = make_lock(cfg, rng)
                res = Resource(cfg)
                reply["protocol"] = PROTOCOL
            elif f == "close":
                pass
            elif lock is None:
                raise Definite("not open: send open first")
            elif f == "acquire":
                reply["value"] = lock.acquire(req["key"])
            elif f == "cs":
                grant = req.get("value") or {}
                check = getattr(lock, "valid", None)
                reply["value"] = res.cs(req["key"], grant.get("token", 0),
                                        (lambda: check(req["key"])) if check else None)
            elif f == "release":
                reply["value"] = lock.release(req["key"], req.get("value") or {})
            else:
                raise Definite("unknown operation %r" % f)
        except Exception as e:  # the completion is the exception's
            kind = "fail" if isinstance(e, Definite) else "info"
            if kind == "info" and classify is not None:
                kind = classify(e)
            reply["type"] = kind
            reply["error"] = "%s: %s" % (type(e).__name__, e)
            if getattr(e, "value", None):
                reply["value"] = e.value
        emit(reply)
        if f == "close":
            break
    if lock is not None:
        try:
            lock.close()
            res.close()
        except Exception as e:
            print("close: %s" % e, file=sys.stderr)
    return 0


def new_owner(cfg, rng):
    """A unique owner value for one acquire, as the Go workers make them."""
    return "p%d-%016x" % (cfg.get("process", 0), rng.getrandbits(64))


def check_imports(*modules):
    """Handles `--check`: imports the library modules and exits 0, or
    prints what is missing and exits 3."""
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        try:
            for m in modules:
                __import__(m)
        except ImportError as e:
            print("%s (scripts/deps.sh installs it)" % e, file=sys.stderr)
            sys.exit(3)
        sys.exit(0)
