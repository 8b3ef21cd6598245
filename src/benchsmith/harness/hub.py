"""Datasets as SWE-bench users have them: a Hugging Face dataset name (``owner/name``, with
``:split``; ``test`` by default) read from the `datasets` library's local cache, or a directory
written by ``Dataset.save_to_disk`` (``DIR:split`` for one split of a saved DatasetDict). The
library is an optional extra (``benchsmith[hf]``) and runs offline: nothing is downloaded."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from benchsmith.core import BenchsmithError

_NAME = re.compile(r"^(?P<name>[\w.-]+/[\w.-]+)(?::(?P<split>[\w.-]+))?$")
_SPLIT = re.compile(r"^[\w.-]+$")


def _saved(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in (
        "dataset_info.json", "state.json", "dataset_dict.json"))


def _on_disk(source: str | Path) -> tuple[Path, str | None] | None:
    """A dataset saved to disk, and the split named after its folder (``DIR:split``)."""
    path = Path(source)
    if _saved(path):
        return path, None
    head, colon, split = str(source).rpartition(":")
    if colon and _SPLIT.match(split) and _saved(Path(head)):
        return Path(head), split
    return None


def is_hub_source(source: str | Path) -> bool:
    """True for a dataset saved to disk (``DIR[:split]``), or a name that is no local path
    (``owner/name[:split]``)."""
    if _on_disk(source) is not None:
        return True
    return not Path(source).exists() and _NAME.match(str(source)) is not None


def with_split(source: str | Path, split: str) -> str:
    """`source` naming its split `split` (``--split``); a one-line error for a local file, a
    bad split name, or a name that already names another split."""
    if not _SPLIT.match(split):
        raise BenchsmithError(f"bad split name {split!r}: letters, digits, '.', '_' and '-' only")
    saved = _on_disk(source)
    where: str | Path
    if saved is not None:
        where, named = saved
    elif not Path(source).exists() and (found := _NAME.match(str(source))):
        where, named = found["name"], found["split"]
    else:
        raise BenchsmithError(f"--split applies to a Hugging Face dataset name or a dataset saved "
                              f"to disk, not to the file {source}")
    if named not in (None, split):
        raise BenchsmithError(f"{source} names the split {named}, --split says {split}")
    return f"{where}:{split}"


def hub_records(source: str | Path, what: str) -> list[tuple[str, Any]]:
    """(where, record) for every row of the dataset `source` (see the module doc)."""
    # offline before the library is imported: it reads these once, at import
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import datasets
    except ImportError:
        raise BenchsmithError(f"reading the {what} dataset {source} needs the optional extra: "
                              "pip install 'benchsmith[hf]'") from None
    saved, split = _on_disk(source), "test"
    try:
        if saved is not None:
            path, named = saved
            loaded = datasets.load_from_disk(str(path))
            if isinstance(loaded, datasets.DatasetDict):
                split = named or ("test" if "test" in loaded else next(iter(loaded)))
                if split not in loaded:
                    raise BenchsmithError(f"the {what} dataset {path} has no split {split}: it has "
                                          f"{', '.join(loaded)}")
                loaded = loaded[split]
            elif named is not None:
                raise BenchsmithError(f"the {what} dataset {path} is one split saved alone: it has "
                                      f"no split {named}")
            label = path.name
        else:
            found = _NAME.match(str(source))
            assert found is not None
            split = found["split"] or split
            loaded = datasets.load_dataset(found["name"], split=split)
            label = found["name"]
    except (FileNotFoundError, ConnectionError, ValueError, KeyError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise BenchsmithError(f"cannot read the {what} dataset {source} (split {split}) from the "
                              f"local cache or disk: {first}") from None
    return [(f"{label}[{split}][{i}]", dict(row)) for i, row in enumerate(loaded)]
