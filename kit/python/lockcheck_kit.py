"""lockcheck's worker kit for Python, standard library only.

It speaks lockcheck's worker protocol (docs/worker-protocol.md) on stdin
and stdout, so that a worker for your own lock client is its acquire and
release and nothing else. Copy this file next to your worker and write:

    import lockcheck_kit as kit

    class MyLock:
        def __init__(self, cfg): ...            # cfg: the open request's config
        def acquire(self, key, deadline): ...   # -> kit.Grant(owner, token)
        def release(self, key, grant): ...      # -> True when it still held it
        # optional: check(key, grant) raises when the lock may be lost,
        #           close()

    kit.main(MyLock)

Completions: raise kit.Definite (or kit.NotAcquired) when the request
certainly had no effect (fail); any other exception, a timeout above all,
replies info. The kit runs the critical section on the protected resource
itself, fenced when the run asks for fencing, exactly as the protocol's
contract states it. stdout carries protocol lines only: log to stderr.
"""

import collections
import json
import socket
import sys
import threading
import time

PROTOCOL = 2

Grant = collections.namedtuple("Grant", "owner token")


class Definite(Exception):
    """The request certainly had no effect: the kit replies fail."""

    def __init__(self, msg, value=None):
        super().__init__(msg)
        self.value = value


class NotAcquired(Definite):
    """The lock was held by others for the whole acquire timeout."""

    def __init__(self, msg="lock not acquired: held by another client until the acquire timeout"):
        super().__init__(msg)


class Rejected(Definite):
    """The fenced resource refused a token below the highest it had seen."""


def bounded(timeout, f, *args):
    """Runs f(*args) and returns its result, or raises TimeoutError (a
    reply of info) when it has not returned within timeout seconds: for a
    client call that can wait through a partition. The call goes on in the
    background; the controller replaces a worker after an info reply."""
    out = {}

    def run():
        try:
            out["v"] = f(*args)
        except BaseException as e:  # noqa: B902: handed to the caller
            out["e"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError("no answer within %.1f s" % timeout)
    if "e" in out:
        raise out["e"]
    return out.get("v")


class Config(dict):
    """The open request's config, with its durations in seconds."""

    @property
    def lease(self):
        return self.get("lease_ms", 1000) / 1000.0

    @property
    def op_timeout(self):
        return self.get("op_timeout_ms", 500) / 1000.0

    @property
    def retry(self):
        return self.get("retry_ms", 10) / 1000.0

    @property
    def think(self):
        return self.get("think_ms", 10) / 1000.0

    @property
    def acquire_timeout(self):
        return self.get("acquire_timeout_ms", 2000) / 1000.0


# The fenced resource's contract: the register of lock key k is the
# storage key resource:k; the highest token the resource has seen for it
# is resource:k:max-token. Each access compares its token with that, and
# refuses a lower one, atomically; a token it takes raises the highest.
FENCED_READ = """local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}"""
FENCED_WRITE = """local max = tonumber(redis.call('GET', KEYS[2]) or '0')
local t = tonumber(ARGV[1])
if t < max then return {0, max} end
redis.call('SET', KEYS[2], t)
redis.call('SET', KEYS[1], ARGV[2])
return {1, t}"""

# UNFENCED, set by a test only, leaves the fencing check out (a worker
# that claims fencing and keeps none).
UNFENCED = False


class Storage:
    """Just enough RESP for the storage node: one connection, made again
    after an error."""

    def __init__(self, addr, timeout):
        host, port = addr.rsplit(":", 1)
        self.addr, self.timeout, self.sock, self.buf = (host, int(port)), timeout, None, b""

    def call(self, *args):
        if self.sock is None:
            self.sock = socket.create_connection(self.addr, timeout=self.timeout)
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        try:
            self.sock.sendall(out)
            return self._reply()
        except Definite:
            raise
        except Exception:
            self.close()
            raise

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buf = None, b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed by the storage node")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise Definite("storage: " + rest.decode())
        if kind == b"+":
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("connection closed by the storage node")
                self.buf += chunk
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise ConnectionError("bad reply %r" % line)


class _Worker:
    def __init__(self, cfg, make_lock):
        if cfg.get("protocol") != PROTOCOL:
            raise Definite("protocol %s not supported (this worker speaks %d)" % (cfg.get("protocol"), PROTOCOL))
        if cfg.get("workload", "register") not in ("", "register"):
            raise Definite("workload %s: the kit runs the register workload only" % cfg.get("workload"))
        self.cfg = cfg
        self.storage = Storage(cfg["storage_addr"], max(cfg.op_timeout, 1.0))
        try:
            self.lock = make_lock(cfg)
        except Definite:
            raise
        except Exception as e:
            raise Definite("open %s: %s: %s" % (cfg.get("lock"), type(e).__name__, e))

    def acquire(self, key):
        g = self.lock.acquire(key, time.monotonic() + self.cfg.acquire_timeout)
        if not g.owner:
            raise Exception("the lock client returned no owner")
        return {"owner": g.owner, "token": g.token}

    def release(self, key, grant):
        return {"released": bool(self.lock.release(key, grant))}

    def check(self, key, grant):
        check = getattr(self.lock, "check", None)
        if check is not None:
            try:
                check(key, grant)
            except Definite:
                raise
            except Exception as e:
                raise Definite("the lock may be lost: %s" % e)

    def cs(self, key, grant):
        keys, token = ["resource:" + key, "resource:" + key + ":max-token"], grant.token
        fenced = self.cfg.get("fencing") and not UNFENCED
        val = {"token": token}
        self.check(key, grant)
        try:
            if fenced:
                ok, read = self.storage.call("EVAL", FENCED_READ, 2, keys[0], keys[1], token)
                if not ok:
                    val.update(rejected="read", max_token=read)
                    raise Rejected("stale fencing token rejected by the resource", val)
            else:
                read = int(self.storage.call("GET", keys[0]) or 0)
        except Definite:
            raise
        except Exception as e:
            raise Definite("read %s: %s" % (keys[0], e), val)  # a read changes nothing
        val.update(read=read, wrote=read + 1)
        time.sleep(self.cfg.think)
        self.check(key, grant)
        if fenced:
            ok, top = self.storage.call("EVAL", FENCED_WRITE, 2, keys[0], keys[1], token, read + 1)
            if not ok:
                val.update(rejected="write", max_token=top)
                raise Rejected("stale fencing token rejected by the resource", val)
        else:
            self.storage.call("SET", keys[0], read + 1)
        return val

    def close(self):
        close = getattr(self.lock, "close", None)
        if close is not None:
            close()
        self.storage.close()


def serve(make_lock, stdin=None, stdout=None):
    """Serves the protocol until close or the end of stdin; make_lock(cfg)
    builds the lock client from the open request's config."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    worker = None
    try:
        for line in stdin:
            req = json.loads(line)
            reply = {"id": req["id"], "type": "ok"}
            f = req.get("f")
            try:
                if f == "open":
                    if worker is not None:
                        worker.close()
                        worker = None
                    worker = _Worker(Config(req.get("config") or {}), make_lock)
                    reply["protocol"] = PROTOCOL
                elif f == "close":
                    pass
                elif worker is None:
                    raise Definite("not open")
                elif f in ("acquire", "cs", "release"):
                    v = req.get("value") or {}
                    grant = Grant(v.get("owner", ""), v.get("token", 0))
                    if f == "acquire":
                        reply["value"] = worker.acquire(req["key"])
                    elif f == "cs":
                        reply["value"] = worker.cs(req["key"], grant)
                    else:
                        reply["value"] = worker.release(req["key"], grant)
                else:
                    raise Definite("unknown request %r" % f)
            except Exception as e:
                reply["type"] = "fail" if isinstance(e, Definite) else "info"
                reply["error"] = "%s %s: %s" % (f, req.get("key", ""), e) if req.get("key") else str(e)
                if getattr(e, "value", None):
                    reply["value"] = e.value
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()
            if f == "close":
                return
    finally:
        if worker is not None:
            worker.close()


def main(make_lock):
    """Serves stdin and stdout, then exits 0."""
    serve(make_lock)
    sys.exit(0)
