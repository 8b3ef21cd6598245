"""Read captured command output with a size cap that keeps the head and the tail, and what every
backend does before it kills a command that ran out of time."""

from __future__ import annotations

from pathlib import Path

_HEAD_BYTES = 256 * 1024

# A command past its timeout is interrupted (SIGINT) and gets this long to end by itself before
# it is killed: pytest, interrupted, still prints its summary and writes its JUnit report, so the
# tests that ran before the deadline keep their results instead of all counting as failed.
INTERRUPT_GRACE_S = 10.0


def read_capped(path: Path, max_bytes: int) -> tuple[str, bool]:
    """Return the file's text, cut in the middle when larger than `max_bytes`.

    The tail is what matters most (pytest's summary comes last), so it gets the
    larger share.
    """
    size = path.stat().st_size
    with open(path, "rb") as handle:
        if size <= max_bytes:
            return handle.read().decode("utf-8", errors="replace"), False
        head_bytes = min(_HEAD_BYTES, max_bytes // 4)
        head = handle.read(head_bytes)
        handle.seek(size - (max_bytes - head_bytes))
        tail = handle.read()
    marker = f"\n[benchsmith] ... {size - max_bytes} bytes of output cut ...\n".encode()
    return (head + marker + tail).decode("utf-8", errors="replace"), True
