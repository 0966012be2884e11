#!/usr/bin/env python3
"""A deliberately broken worker for conformance tests: the example worker
(docs/examples/worker.py) with three classic mistakes.

1. It prints a banner to stdout (stdout must carry protocol lines only).
2. It accepts any protocol version in open.
3. It replies fail for every error, timeouts included (a timeout is info).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "examples"))
import worker as w  # noqa: E402

print("broken worker ready")  # mistake 1
sys.stdout.flush()

_init = w.Worker.__init__


def accept_any(self, cfg):
    cfg = dict(cfg, protocol=w.PROTOCOL)  # mistake 2
    _init(self, cfg)


w.Worker.__init__ = accept_any
w.Fail = Exception  # mistake 3: every exception is a "certain" failure
w.main()
