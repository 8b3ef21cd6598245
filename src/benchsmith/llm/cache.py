"""Every model call kept in SQLite, keyed by (provider, model, messages, parameters), so a
re-run of a generation is free and gives the same answers."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from benchsmith.llm.calls import CallParams, Completion, Message

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cost_usd REAL NOT NULL,
    finish_reason TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def call_key(provider: str, model: str, messages: list[Message], params: CallParams) -> tuple[str, str]:
    """(key, request): the canonical JSON of the call and its SHA-256."""
    request = json.dumps({"provider": provider, "model": model,
                          "messages": [m.model_dump() for m in messages],
                          "params": params.model_dump()}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(request.encode()).hexdigest(), request


class CallCache:
    """A SQLite file of completed calls (safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, key: str) -> Completion | None:
        """The stored completion of the call `key`, marked cached, or None."""
        with self._lock, self._connect() as db:
            row = db.execute("SELECT text, input_tokens, output_tokens, latency_s, cost_usd, "
                             "finish_reason FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        text, input_tokens, output_tokens, latency_s, cost_usd, finish_reason = row
        return Completion(text=text, input_tokens=input_tokens, output_tokens=output_tokens,
                          latency_s=latency_s, cost_usd=cost_usd, finish_reason=finish_reason,
                          cached=True)

    def put(self, key: str, provider: str, model: str, request: str, completion: Completion) -> None:
        """Store a completed call (a later identical call is served from here)."""
        with self._lock, self._connect() as db:
            db.execute("INSERT OR REPLACE INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (key, provider, model, request, completion.text, completion.input_tokens,
                        completion.output_tokens, completion.latency_s, completion.cost_usd,
                        completion.finish_reason, time.time()))

    def __len__(self) -> int:
        with self._lock, self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
