"""The reference database: validated plans per repository and commit, reused for nearby commits."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchsmith.core import BenchsmithError, Plan

_SCHEMA = """
CREATE TABLE IF NOT EXISTS specs (
    repo TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    date TEXT NOT NULL,
    python TEXT NOT NULL,
    install TEXT NOT NULL,
    test TEXT NOT NULL,
    plan TEXT NOT NULL,
    pass_rate REAL,
    backend TEXT NOT NULL DEFAULT 'local',
    created_at TEXT NOT NULL,
    PRIMARY KEY (repo, commit_sha, backend)
);
CREATE INDEX IF NOT EXISTS specs_repo ON specs (repo, date);
"""


class ReferenceSpec(BaseModel):
    """A validated plan as stored."""

    repo: str
    commit: str
    date: str
    python: str
    install: list[str]
    test: list[str]
    plan: Plan
    pass_rate: float | None
    backend: str


def default_path() -> Path:
    """`$BENCHSMITH_REFDB`, else ~/.cache/benchsmith/reference.sqlite."""
    env = os.environ.get("BENCHSMITH_REFDB")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "benchsmith" / "reference.sqlite"


class ReferenceDB:
    """A SQLite file of validated setups; safe to share between threads of one process."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path else default_path()
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise BenchsmithError(f"cannot open reference database {self.path}: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def save(self, repo: str, commit: str, date: str, plan: Plan, install: list[str],
             test: list[str], pass_rate: float | None, backend: str = "local") -> None:
        """Store (or replace) the validated plan for `repo` at `commit`."""
        row = (repo, commit, date[:10], plan.python, json.dumps(install), json.dumps(test),
               plan.model_dump_json(), pass_rate, backend, datetime.now(timezone.utc).isoformat())
        with self._lock, self._connect() as db:
            db.execute("INSERT OR REPLACE INTO specs VALUES (?,?,?,?,?,?,?,?,?,?)", row)

    def nearest(self, repo: str, date: str, backend: str = "local", limit: int = 3) -> list[ReferenceSpec]:
        """Validated specs of `repo`, nearest to `date` first."""
        query = (
            "SELECT repo, commit_sha, date, python, install, test, plan, pass_rate, backend "
            "FROM specs WHERE repo = ? AND backend = ? "
            "ORDER BY abs(julianday(date) - julianday(?)), created_at DESC LIMIT ?"
        )
        with self._lock, self._connect() as db:
            rows = db.execute(query, (repo, backend, date[:10], limit)).fetchall()
        return [_spec(r) for r in rows]

    def of_repo(self, repo: str, backend: str = "local") -> list[ReferenceSpec]:
        """Every validated spec of `repo`, newest first: what a task away from the database needs
        to answer :meth:`nearest` itself (see :class:`ReferencePlans`)."""
        query = ("SELECT repo, commit_sha, date, python, install, test, plan, pass_rate, backend "
                 "FROM specs WHERE repo = ? AND backend = ? ORDER BY created_at DESC")
        with self._lock, self._connect() as db:
            rows = db.execute(query, (repo, backend)).fetchall()
        return [_spec(r) for r in rows]

    def store(self, spec: ReferenceSpec) -> None:
        """Save a spec a task returned."""
        self.save(spec.repo, spec.commit, spec.date, spec.plan, spec.install, spec.test,
                  spec.pass_rate, spec.backend)

    def count(self, repo: str | None = None) -> int:
        """Number of stored specs (for one repository, or all)."""
        with self._lock, self._connect() as db:
            if repo:
                return int(db.execute("SELECT count(*) FROM specs WHERE repo = ?", (repo,)).fetchone()[0])
            return int(db.execute("SELECT count(*) FROM specs").fetchone()[0])


def _spec(row: tuple[Any, ...]) -> ReferenceSpec:
    return ReferenceSpec(repo=row[0], commit=row[1], date=row[2], python=row[3],
                         install=json.loads(row[4]), test=json.loads(row[5]),
                         plan=Plan.model_validate_json(row[6]), pass_rate=row[7], backend=row[8])


class ReferencePlans:
    """The reference database as a task away from it sees it: the specs of one repository,
    handed over by the driver, answer :meth:`nearest` as the database would; the specs the
    task validates are kept in :attr:`saved` for the driver to store."""

    def __init__(self, specs: list[ReferenceSpec]) -> None:
        self.specs = specs  # newest first, as ReferenceDB.of_repo gives them
        self.saved: list[ReferenceSpec] = []

    def nearest(self, repo: str, date: str, backend: str = "local", limit: int = 3) -> list[ReferenceSpec]:
        """Validated specs of `repo`, nearest to `date` first (ties: the newest)."""
        day = _day(date)
        known = [s for s in [*reversed(self.saved), *self.specs] if s.repo == repo and s.backend == backend]
        return sorted(known, key=lambda s: abs((_day(s.date) - day).days))[:limit]

    def save(self, repo: str, commit: str, date: str, plan: Plan, install: list[str],
             test: list[str], pass_rate: float | None, backend: str = "local") -> None:
        """Keep a validated plan for the driver."""
        self.saved.append(ReferenceSpec(repo=repo, commit=commit, date=date[:10], python=plan.python,
                                        install=install, test=test, plan=plan,
                                        pass_rate=pass_rate, backend=backend))


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text[:10])
