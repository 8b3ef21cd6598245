"""A fake language-model server on 127.0.0.1: OpenAI's chat completions and Anthropic's
messages, answered from a :class:`~benchsmith.llm.scripted.Script`, with scripted faults.

Used by the tests (and usable offline with ``--base-url``): it checks keys and model names as
the real APIs do, answers 429 with ``Retry-After``, 500, slowly, or with garbage when told to,
and logs every request, so a test can count the calls that reached it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from benchsmith.llm.calls import Message
from benchsmith.llm.scripted import Script, estimate_tokens
from benchsmith.testing.loopback import LoopbackServer

FaultKind = Literal["rate_limit", "server_error", "slow", "garbage", "empty_choices"]
API = Literal["openai", "anthropic"]


@dataclass
class Fault:
    """The next `times` requests fail with `kind` (`slow`: answered after `delay_s`)."""

    kind: FaultKind
    times: int = 1
    retry_after: str | None = "1"
    delay_s: float = 0.0


@dataclass(frozen=True)
class LoggedCall:
    """One request the fake received."""

    api: API
    model: str
    status: int
    messages: tuple[str, ...]


class FakeLLMServer(LoopbackServer):
    """``with FakeLLMServer(script) as llm: OpenAI(base_url=llm.openai_url)``."""

    def __init__(self, script: Script, *, valid_keys: set[str] | None = None,
                 models: set[str] | None = None) -> None:
        self.script = script
        self.valid_keys = valid_keys  # None: any key
        self.models = models  # None: any model name
        self.faults: list[Fault] = []
        self.calls: list[LoggedCall] = []
        self._samples: dict[tuple[str, ...], int] = {}
        self._lock = threading.Lock()
        self._serve(_handler_for(self))
        self.openai_url = f"{self.url}/v1"
        self.anthropic_url = self.url

    def add_fault(self, kind: FaultKind, times: int = 1, retry_after: str | None = "1",
                  delay_s: float = 0.0) -> None:
        """Fail the next `times` requests with `kind`."""
        self.faults.append(Fault(kind, times, retry_after, delay_s))

    def answered(self) -> int:
        """How many requests got a completion (status 200)."""
        return sum(1 for call in self.calls if call.status == 200)

    def _take_fault(self) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    def respond(self, api: API, headers: dict[str, str], body: bytes
                ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for one POST."""
        try:
            request = json.loads(body)
            model = str(request["model"])
            raw = request["messages"]
            system = request.get("system")
            messages = ([Message(role="system", content=system)] if system else []) + [
                Message(role=m["role"], content=_text(m["content"])) for m in raw]
        except (ValueError, KeyError, TypeError):
            return _error(api, 400, "invalid_request_error", "malformed request")
        logged = tuple(m.content for m in messages)
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        status, extra, payload = self._answer(api, key, model, messages)
        self.calls.append(LoggedCall(api, model, status, logged))
        return status, extra, payload

    def _answer(self, api: API, key: str, model: str, messages: list[Message]
                ) -> tuple[int, dict[str, str], bytes]:
        if self.valid_keys is not None and key not in self.valid_keys:
            return _error(api, 401, "authentication_error", f"Incorrect API key provided: {key}")
        if self.models is not None and model not in self.models:
            return _error(api, 404, "not_found_error", f"The model `{model}` does not exist")
        fault = self._take_fault()
        if fault and fault.kind == "rate_limit":
            status, extra, body = _error(api, 429, "rate_limit_error", "Rate limit reached")
            return status, {**extra, **({"Retry-After": fault.retry_after}
                                        if fault.retry_after else {})}, body
        if fault and fault.kind == "server_error":
            return _error(api, 500, "api_error", "The server had an error")
        if fault and fault.kind == "garbage":
            return 200, {"Content-Type": "application/json"}, b"<html>not json at all"
        if fault and fault.kind == "slow":
            time.sleep(fault.delay_s)
        with self._lock:  # each repeat of the same prompt is the next sample
            sample = self._samples.get(tuple(m.content for m in messages), 0)
            self._samples[tuple(m.content for m in messages)] = sample + 1
        reply = self.script.answer(messages, sample)
        if reply is None:
            return _error(api, 400, "invalid_request_error", "the fake's script has no answer")
        prompt = sum(estimate_tokens(m.content) for m in messages)
        completion = estimate_tokens(reply)
        if api == "anthropic":
            payload: dict[str, Any] = {
                "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": reply}], "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt, "output_tokens": completion}}
        else:
            choices = [] if fault and fault.kind == "empty_choices" else [{
                "index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": reply}}]
            payload = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                       "model": model, "choices": choices,
                       "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion}}
        return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def _text(content: Any) -> str:
    if isinstance(content, list):  # Anthropic's and OpenAI's content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _error(api: API, status: int, kind: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = ({"type": "error", "error": {"type": kind, "message": message}} if api == "anthropic"
            else {"error": {"message": message, "type": kind, "code": None}})
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _handler_for(fake: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?", 1)[0]
            if path.endswith("/chat/completions"):
                status, extra, payload = fake.respond("openai", headers, body)
            elif path.endswith("/messages"):
                status, extra, payload = fake.respond("anthropic", headers, body)
            else:
                status, extra, payload = 404, {"Content-Type": "text/plain"}, b"Not Found"
            try:
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler
