#!/usr/bin/env python3
"""The test suite's time, by file and for the slowest tests, as markdown (docs/tests.md's table).

The session writes every test's seconds (setup, call and teardown) to build/test_times.json
(test/conftest.py). After a run (``make test``, or any pytest run of the files wanted):

    .venv/bin/python test/suite_table.py [build/test_times.json] [--slowest 20]
"""
import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("times", nargs="?", default=str(ROOT / "build" / "test_times.json"))
    ap.add_argument("--slowest", type=int, default=20)
    a = ap.parse_args(argv)
    times = json.loads(Path(a.times).read_text())
    files = defaultdict(lambda: [0, 0.0, False])
    for nodeid, t in times.items():
        f = files[nodeid.split("::")[0]]
        f[0] += 1
        f[1] += t["seconds"]
        f[2] = f[2] or t["nodes"]
    total = sum(f[1] for f in files.values())
    print("| test file | tests | seconds | starts node processes |")
    print("|---|---|---|---|")
    for name, (count, seconds, nodes) in sorted(files.items(), key=lambda kv: -kv[1][1]):
        print("| `%s` | %d | %.1f | %s |" % (name, count, seconds, "yes" if nodes else ""))
    print("| all | %d | %.1f (%.1f min) | %d files |" % (len(times), total, total / 60.0,
                                                         sum(1 for f in files.values() if f[2])))
    print()
    print("| slowest tests | seconds |")
    print("|---|---|")
    for nodeid, t in sorted(times.items(), key=lambda kv: -kv[1]["seconds"])[:a.slowest]:
        print("| `%s` | %.1f |" % (nodeid, t["seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
