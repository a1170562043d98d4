"""A RAG service instrumented with the OpenTelemetry Python SDK, as a user's would be: it retrieves the
two paragraphs of a Markdown file sharing most words with the question, answers with the first sentence
of the best one, and reports both steps as OpenInference spans through the SDK's OTLP/HTTP exporter
(which reads OTEL_EXPORTER_OTLP_ENDPOINT). It joins the caller's trace from the `traceparent` header.

  python traced_target.py PORT CORPUS.md [REPLAY.json]

Paths: POST /with-contexts returns the passages in its reply and is not traced by the caller;
POST /traced returns the answer alone (the passages are only in its spans); POST /silent sends no span.
POST /replay answers as /traced but with another retriever's passages and answer, read per question from
REPLAY.json ({"question": {"answer": "...", "passages": [{"id", "score", "text"}]}}): a service whose
retriever is the one ragtester runs in-process.
POST /agent/MODE is an agent that reports its tool calls as spans and answers as /traced does: MODE
`good` calls `search` (an OpenInference TOOL span over a RETRIEVER span, arguments {"query", "collection":
"manuals"}); `wrong-tool` calls `get_weather` instead (a GenAI execute_tool span); `wrong-argument` searches
the collection "archive"; `no-search` calls nothing. POST /agent-reply/MODE answers the same with its calls
in the reply's `tool_calls` (OpenAI's shape) and no span; MODE `malformed` gives a call with no name.
Conversations: the `X-Session-Id` header names a session whose questions are kept in order, listed by
GET /sessions.
"""
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

port, corpus = int(sys.argv[1]), sys.argv[2]
replay = json.load(open(sys.argv[3], encoding="utf-8")) if len(sys.argv) > 3 else {}
paragraphs = [p.strip() for p in open(corpus, encoding="utf-8").read().split("\n\n")]
paragraphs = [p for p in paragraphs if p and not p.startswith("#")]

provider = TracerProvider(resource=Resource.create({"service.name": "traced-target"}))
# Spans are exported as each ends, so a call's trace is complete when its reply is.
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("traced-target")

sessions = {}
lock = threading.Lock()


def words(text):
    return set(re.findall(r"\w+", text.lower()))


def retrieve(query, replaying=False):
    if replaying:
        return [(p["text"], p["score"], p["id"]) for p in replay[query]["passages"]]
    scored = [(len(words(query) & words(p)), -i, p) for i, p in enumerate(paragraphs)]
    scored.sort(reverse=True)
    return [(p, float(score), f"p{-neg}") for score, neg, p in scored[:2]]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            self.reply(sessions)

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        query = request["query"]
        session = self.headers.get("X-Session-Id")
        if session:
            with lock:
                sessions.setdefault(session, []).append(query)
        if self.path.startswith("/agent-reply/"):
            self.agent_reply(query, self.path.rsplit("/", 1)[1])
            return
        if self.path.startswith("/agent/"):
            self.agent(query, self.path.rsplit("/", 1)[1])
            return
        if self.path == "/silent":
            passages = retrieve(query)
            self.reply({"answer": passages[0][0].split(". ")[0] + "."})
            return
        parent = propagate.extract(dict(self.headers))
        with tracer.start_as_current_span("rag", context=parent) as rag:
            rag.set_attribute("openinference.span.kind", "CHAIN")
            rag.set_attribute("input.value", query)
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attribute("openinference.span.kind", "RETRIEVER")
                span.set_attribute("input.value", query)
                passages = retrieve(query, self.path == "/replay")
                for i, (text, score, pid) in enumerate(passages):
                    span.set_attribute(f"retrieval.documents.{i}.document.id", pid)
                    span.set_attribute(f"retrieval.documents.{i}.document.score", score)
                    span.set_attribute(f"retrieval.documents.{i}.document.content", text)
            with tracer.start_as_current_span("generate") as span:
                span.set_attribute("openinference.span.kind", "LLM")
                span.set_attribute("llm.model_name", "extractive-first-sentence")
                answer = replay[query]["answer"] if self.path == "/replay" else passages[0][0].split(". ")[0] + "."
                span.set_attribute("llm.token_count.prompt", len(query.split()) + sum(len(p[0].split()) for p in passages))
                span.set_attribute("llm.token_count.completion", len(answer.split()))
        body = {"answer": answer}
        if self.path == "/with-contexts":
            body["contexts"] = [p[0] for p in passages]
        self.reply(body)


    def agent(self, query, mode):
        parent = propagate.extract(dict(self.headers))
        with tracer.start_as_current_span("agent", context=parent) as agent:
            agent.set_attribute("openinference.span.kind", "AGENT")
            passages = retrieve(query)
            if mode in ("good", "wrong-argument"):
                collection = "manuals" if mode == "good" else "archive"
                with tracer.start_as_current_span("search") as tool:
                    tool.set_attribute("openinference.span.kind", "TOOL")
                    tool.set_attribute("tool.name", "search")
                    tool.set_attribute("input.value", json.dumps({"query": query, "collection": collection}))
                    with tracer.start_as_current_span("retrieve") as span:
                        span.set_attribute("openinference.span.kind", "RETRIEVER")
                        for i, (text, score, pid) in enumerate(passages):
                            span.set_attribute(f"retrieval.documents.{i}.document.id", pid)
                            span.set_attribute(f"retrieval.documents.{i}.document.content", text)
            elif mode == "wrong-tool":
                with tracer.start_as_current_span("execute_tool get_weather") as tool:
                    tool.set_attribute("gen_ai.operation.name", "execute_tool")
                    tool.set_attribute("gen_ai.tool.name", "get_weather")
                    tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": "Oslo"}))
                    tool.set_attribute("gen_ai.tool.call.result", "sunny")
            with tracer.start_as_current_span("generate") as span:
                span.set_attribute("openinference.span.kind", "LLM")
                span.set_attribute("llm.model_name", "extractive-first-sentence")
                answer = passages[0][0].split(". ")[0] + "."
        self.reply({"answer": answer, "contexts": [p[0] for p in passages]})

    def agent_reply(self, query, mode):
        passages = retrieve(query)
        call = {"id": "call_1", "type": "function",
                "function": {"name": "search", "arguments": json.dumps({"query": query, "collection": "manuals"})}}
        if mode == "malformed":
            call["function"] = {"arguments": "{}"}
        self.reply({"answer": passages[0][0].split(". ")[0] + ".", "contexts": [p[0] for p in passages],
                    "tool_calls": [call]})


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
