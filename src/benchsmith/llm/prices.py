"""Prices per million tokens from a small editable table (``prices.toml`` beside this module,
overridden by the file ``BENCHSMITH_PRICES`` names)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchsmith.core import BenchsmithError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE = Path(__file__).with_name("prices.toml")


class Price(BaseModel):
    """USD per million input and output tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """What a call with these token counts costs, in USD."""
        return round((input_tokens * self.input + output_tokens * self.output) / 1e6, 8)


class Prices:
    """The price table; :meth:`of` finds a model's price (None when unknown)."""

    def __init__(self, table: dict[str, Price]) -> None:
        self.table = table

    @classmethod
    def load(cls, override: Path | None = None) -> Prices:
        """The packaged table, then the override (argument or ``BENCHSMITH_PRICES``) on top."""
        table = _read(TABLE)
        extra = override or (Path(os.environ["BENCHSMITH_PRICES"])
                             if os.environ.get("BENCHSMITH_PRICES") else None)
        if extra is not None:
            table.update(_read(extra))
        return cls(table)

    def of(self, provider: str, model: str) -> Price | None:
        """The price of ``provider:model``: exact, else the longest key its name starts with."""
        label = f"{provider}:{model}"
        if label in self.table:
            return self.table[label]
        prefixes = [key for key in self.table if label.startswith(key)]
        return self.table[max(prefixes, key=len)] if prefixes else None


def _read(path: Path) -> dict[str, Price]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return {key: Price.model_validate(value) for key, value in data.items()}
    except OSError as exc:
        raise BenchsmithError(f"cannot read the price table {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise BenchsmithError(f"invalid price table {path}: {str(exc).splitlines()[0]}") from None
