"""Standard-library modules that later Pythons removed, and what replaces them."""

from __future__ import annotations

# Module -> (first Python "X.Y" without it, drop-in PyPI replacement or "" if none).
STDLIB_REMOVED: dict[str, tuple[str, str]] = {
    "macpath": ("3.8", ""),
    "dummy_threading": ("3.9", ""),
    "formatter": ("3.10", ""),
    "parser": ("3.10", ""),
    "symbol": ("3.10", ""),
    "binhex": ("3.11", ""),
    "distutils": ("3.12", "setuptools"),  # setuptools ships a `distutils` shim
    "imp": ("3.12", ""),
    "asynchat": ("3.12", "pyasynchat"),
    "asyncore": ("3.12", "pyasyncore"),
    "smtpd": ("3.12", "standard-smtpd"),  # not aiosmtpd: that has a different API
    "cgi": ("3.13", "legacy-cgi"),
    "cgitb": ("3.13", "legacy-cgi"),
    "crypt": ("3.13", "standard-crypt"),
    "telnetlib": ("3.13", "standard-telnetlib"),
    "nntplib": ("3.13", "standard-nntplib"),
    "pipes": ("3.13", "standard-pipes"),
    "audioop": ("3.13", "audioop-lts"),
    "aifc": ("3.13", "standard-aifc"),
    "chunk": ("3.13", "standard-chunk"),
    "imghdr": ("3.13", "standard-imghdr"),
    "mailcap": ("3.13", "standard-mailcap"),
    "sndhdr": ("3.13", "standard-sndhdr"),
    "sunau": ("3.13", "standard-sunau"),
    "uu": ("3.13", "standard-uu"),
    "xdrlib": ("3.13", "standard-xdrlib"),
    "msilib": ("3.13", ""),
    "nis": ("3.13", ""),
    "ossaudiodev": ("3.13", ""),
    "spwd": ("3.13", ""),
    "lib2to3": ("3.13", ""),
    "tkinter.tix": ("3.13", ""),
}


def stdlib_removal(module: str) -> tuple[str, str] | None:
    """Return STDLIB_REMOVED's entry for `module` or its longest listed dotted prefix."""
    parts = module.strip().split(".")
    for end in range(len(parts), 0, -1):
        entry = STDLIB_REMOVED.get(".".join(parts[:end]))
        if entry is not None:
            return entry
    return None
