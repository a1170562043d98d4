"""The reference client for the engine benchmark: the same number of chat calls, at the same concurrency,
against the same scripted server, from the leanest asyncio client (aiohttp, one session, a semaphore).
It does no retrieval, no prompt building and records nothing, so its wall time is what this machine and
server allow; ragtester's engine is compared with it in docs/benchmarks.md.

    python bench/engine_client.py BASE_URL CALLS CONCURRENCY
"""

import asyncio
import json
import sys
import time

import aiohttp


async def main(base: str, calls: int, concurrency: int) -> None:
    url = base.rstrip("/") + "/chat/completions"
    gate = asyncio.Semaphore(concurrency)
    answered = 0

    async def one(i: int, session: aiohttp.ClientSession) -> None:
        nonlocal answered
        body = {
            "model": "bench",
            "messages": [{"role": "user", "content": f"Question: call {i}"}],
            "temperature": 0,
        }
        async with gate:
            async with session.post(url, json=body) as r:
                reply = await r.json()
                if reply["choices"][0]["message"]["content"]:
                    answered += 1

    started = time.perf_counter()
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(one(i, session) for i in range(calls)))
    wall = time.perf_counter() - started
    print(json.dumps({"calls": calls, "answered": answered, "wall_s": round(wall, 3)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
