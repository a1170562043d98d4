"""What a call costs through each kind of target, and how close an async function gets to the ideal.

    python bench/python_targets.py            # in an environment with the ragtester wheel installed

1. Per-call overhead of one trivial system ("I cannot tell.") as a Python callable, a command target (a
   shell that prints the JSON reply) and an HTTP target (Python's ThreadingHTTPServer on 127.0.0.1), one
   call at a time: (T(400 cases) - T(100 cases)) / 300, so ingesting the documents and writing the run
   cancel out. Median of 3.
2. 1,000 cases of an async function that sleeps 50 ms, 32 in flight: wall time against the ideal
   (1,000 × 50 ms / 32 = 1.56 s), and the same run with a function that returns at once (the fixed cost).
"""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import ragtester

REPLY = "I cannot tell."


def suite_of(base: ragtester.Suite, n: int, folder: Path) -> ragtester.Suite:
    single = [c for c in base if not c.get("turn")]
    cases = []
    for i in range(n):
        case = dict(single[i % len(single)])
        case["id"] = hashlib.sha256(f"{case['id']}-{i}".encode()).hexdigest()[:16]
        case["query"] = f"{case['query']} ({i})"
        cases.append(case)
    suite = ragtester.Suite(folder / f"suite-{n}.jsonl", cases)
    suite.save(suite.path)
    return suite


class Reply(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({"answer": REPLY}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def timed(run) -> float:
    started = time.perf_counter()
    result = run()
    elapsed = time.perf_counter() - started
    assert result.errors == 0, result.rows[0]["error"]
    return elapsed


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ragtester-bench-"))
    docs = ragtester.sample_corpus(work / "corpus")
    base = ragtester.generate(docs, work / "base.jsonl", n_test=3)
    small, large = suite_of(base, 100, work), suite_of(base, 400, work)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    command = work / "command.toml"
    # A TOML array of basic strings is written as JSON writes it.
    shell = ["sh", "-c", "cat >/dev/null; printf '%s' '" + json.dumps({"answer": REPLY}) + "'"]
    command.write_text(
        f'[[target]]\nname = "sh"\ntype = "command"\ncommand = {json.dumps(shell)}\n'
        'answer_pointer = "/answer"\n', encoding="utf-8")
    http_toml = work / "http.toml"
    http_toml.write_text(
        f'[[target]]\nname = "http"\ntype = "http"\nurl = "http://127.0.0.1:{port}/ask"\n'
        'answer_pointer = "/answer"\n', encoding="utf-8")

    def callable_target(question, history=None):
        return REPLY

    kinds = {
        "Python callable": lambda suite, out: ragtester.run(suite, target=callable_target, docs=docs, out=out,
                                                            concurrency=1, no_cache=True),
        "command target": lambda suite, out: ragtester.run(suite, docs=docs, out=out, config=command,
                                                           concurrency=1, no_cache=True),
        "HTTP target": lambda suite, out: ragtester.run(suite, docs=docs, out=out, config=http_toml,
                                                        concurrency=1, no_cache=True),
    }
    print("| target | per call (median of 3) | 100 cases | 400 cases |")
    print("|---|---|---|---|")
    for name, run in kinds.items():
        per_call, smalls, larges = [], [], []
        for attempt in range(3):
            t_small = timed(lambda: run(small, work / f"{name}-{attempt}-s"))
            t_large = timed(lambda: run(large, work / f"{name}-{attempt}-l"))
            smalls.append(t_small)
            larges.append(t_large)
            per_call.append((t_large - t_small) / 300)
        print(f"| {name} | {statistics.median(per_call) * 1000:.3f} ms | {statistics.median(smalls):.2f} s | "
              f"{statistics.median(larges):.2f} s |")

    thousand = suite_of(base, 1000, work)

    async def sleeper(question, history=None):
        await asyncio.sleep(0.05)
        return REPLY

    async def instant(question, history=None):
        return REPLY

    walls, fixed = [], []
    for attempt in range(3):
        walls.append(timed(lambda: ragtester.run(thousand, target=sleeper, docs=docs, concurrency=32,
                                                 out=work / f"async-{attempt}", no_cache=True)))
        fixed.append(timed(lambda: ragtester.run(thousand, target=instant, docs=docs, concurrency=32,
                                                 out=work / f"instant-{attempt}", no_cache=True)))
    ideal = 1000 * 0.05 / 32
    wall, base_cost = statistics.median(walls), statistics.median(fixed)
    print()
    print(f"1,000 cases, async 50 ms, 32 in flight: {wall:.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)}); "
          f"ideal {ideal:.2f} s; the same run of a function that returns at once {base_cost:.2f} s; "
          f"wall minus that fixed cost {wall - base_cost:.2f} s = {(wall - base_cost) / ideal:.2f} × ideal")
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
