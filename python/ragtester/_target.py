"""A Python callable as the system under test.

The engine (Rust) calls ``Host.submit(question, history_json, session, done)`` for every cell and awaits
``done(reply_json, None)`` or ``done(None, message)`` without holding the GIL. A sync function runs on a
worker thread of the host's pool, an async one on the host's event loop, so calls overlap up to the run's
concurrency. Whatever the function raises, or returns in a shape that cannot be read, becomes that cell's
error with its message: never a pass or a fail.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import threading
import traceback
from typing import Any, Callable, Mapping, Optional

Done = Callable[..., None]

#: Threads a sync function's pool may start: above any concurrency a run is given.
POOL_LIMIT = 1024


class Host:
    """Calls one answer function for the engine. ``close()`` stops its threads."""

    def __init__(self, fn: Callable[..., Any], timeout_s: float) -> None:
        self.fn = fn
        self.timeout_s = float(timeout_s)
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)
        )
        self.takes_history = takes_history(fn)
        self._pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        if self.is_async:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="ragtester-asyncio", daemon=True
            )
            self._thread.start()
        else:
            # The engine bounds the calls in flight (the run's concurrency); the pool only starts a thread
            # when none is idle, so it never queues a call the engine let in, whose latency would then
            # count our own waiting.
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=POOL_LIMIT, thread_name_prefix="ragtester-call"
            )

    def submit(self, question: str, history_json: str, session: Optional[str], done: Done) -> None:
        history = json.loads(history_json)
        if self._loop is not None:
            future = asyncio.run_coroutine_threadsafe(self._call_async(question, history), self._loop)
        else:
            assert self._pool is not None
            future = self._pool.submit(self._call, question, history)
        future.add_done_callback(lambda f: self._finish(f, done))

    def _arguments(self, question: str, history: list) -> tuple[tuple, dict]:
        if history and not self.takes_history:
            raise TypeError(
                f"{self.name} takes no `history` argument, but this case is a turn of a conversation: "
                "define it as answer_fn(question, history=None)"
            )
        return (question,), ({"history": history} if self.takes_history else {})

    def _call(self, question: str, history: list) -> str:
        args, kwargs = self._arguments(question, history)
        return reply_json(self.fn(*args, **kwargs), self.name)

    async def _call_async(self, question: str, history: list) -> str:
        args, kwargs = self._arguments(question, history)
        return reply_json(await self.fn(*args, **kwargs), self.name)

    def _finish(self, future: "concurrent.futures.Future[str]", done: Done) -> None:
        if future.cancelled():
            done(None, "the call was cancelled")
            return
        error = future.exception()
        if error is None:
            done(future.result(), None)
        else:
            done(None, describe(error))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)


def takes_history(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` accepts a ``history`` keyword (by name, or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.name == "history" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


def describe(error: BaseException) -> str:
    """An exception as a cell's error: its type and message, and where in the user's code it was raised."""
    text = f"{type(error).__name__}: {error}"
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if "/ragtester/" not in f.filename.replace("\\", "/")]
    if own:
        last = own[-1]
        text += f" (at {last.filename}:{last.lineno}, in {last.name})"
    return text


def reply_json(result: Any, name: str) -> str:
    """What the function returned, in the one shape the engine reads (``TargetSettings::function``):
    ``answer``; ``contexts`` as ``{"text"}``; ``citations`` as ``{"ranks", "text"}``; ``tool_calls`` only
    when the function reported them."""
    if isinstance(result, str):
        return json.dumps({"answer": result, "contexts": [], "citations": []})
    if not isinstance(result, Mapping):
        raise TypeError(
            f"{name} returned {type(result).__name__}; it must return a str, or a dict with an "
            "`answer` (and optionally `contexts`, `citations`, `tool_calls`)"
        )
    if "answer" not in result:
        raise TypeError(f"{name} returned a dict without `answer` (its keys: {', '.join(map(str, result))})")
    answer = result["answer"]
    if not isinstance(answer, str):
        raise TypeError(f"{name} returned an `answer` of type {type(answer).__name__}, not str")
    reply: dict[str, Any] = {
        "answer": answer,
        "contexts": [{"text": context_text(c, name)} for c in result.get("contexts") or []],
        "citations": [citation(c, name) for c in result.get("citations") or []],
    }
    if result.get("tool_calls") is not None:
        reply["tool_calls"] = [tool_call(c) for c in result["tool_calls"]]
    return json.dumps(reply, default=str)


def context_text(context: Any, name: str) -> str:
    """A passage's text: a str, a dict's ``text``/``page_content``/``content``, or an object's
    ``page_content`` (LangChain), ``get_content()`` (LlamaIndex) or ``text``."""
    if isinstance(context, str):
        return context
    if isinstance(context, Mapping):
        for key in ("text", "page_content", "content"):
            if isinstance(context.get(key), str):
                return context[key]
    for attribute in ("page_content", "text", "content"):
        value = getattr(context, attribute, None)
        if isinstance(value, str):
            return value
    get_content = getattr(context, "get_content", None)
    if callable(get_content):
        return str(get_content())
    raise TypeError(
        f"{name} returned a context of type {type(context).__name__}: give str, or a dict or object "
        "with its text in `text` or `page_content`"
    )


def citation(value: Any, name: str) -> Any:
    """A citation: a passage number (1-based), a list of them, or a dict with ``ranks`` and ``text``."""
    if isinstance(value, Mapping):
        return {"ranks": value.get("ranks", value.get("rank")), "text": value.get("text")}
    if isinstance(value, (int, str, list, tuple)):
        return {"ranks": list(value) if isinstance(value, tuple) else value}
    raise TypeError(f"{name} returned a citation of type {type(value).__name__}")


def tool_call(value: Any) -> Any:
    """A tool call as JSON: a dict as given (OpenAI's, RAGAS's or DeepEval's shape), or an object's
    ``name`` and ``args`` (RAGAS ``ToolCall``) or ``input_parameters`` (DeepEval ``ToolCall``)."""
    if isinstance(value, Mapping):
        return dict(value)
    name = getattr(value, "name", None)
    for attribute in ("args", "input_parameters", "arguments"):
        arguments = getattr(value, attribute, None)
        if arguments is not None:
            return {"name": name, ("args" if attribute == "arguments" else attribute): arguments}
    return {"name": name}
