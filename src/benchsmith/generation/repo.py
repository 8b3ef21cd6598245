"""An instance's repository at its `base_commit`, read straight from git (nothing is checked
out): the file list and the text of any file, read in one `git cat-file --batch`."""

from __future__ import annotations

import subprocess
import threading

from benchsmith.core import BenchsmithError
from benchsmith.harness.checkout import git, resolve, resolve_source
from benchsmith.instance import TaskInstance
from benchsmith.sandbox.tools import git_binary

MAX_FILE_BYTES = 1_000_000  # larger files are data, not context


class RepoSnapshot:
    """The files of one commit of a repository."""

    def __init__(self, git_dir: str, commit: str) -> None:
        self.git_dir, self.commit = git_dir, commit
        listing = git("ls-tree", "-r", "-z", "--long", commit, cwd=git_dir)
        self.sizes: dict[str, int] = {}
        for entry in listing.split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if path and len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit():
                self.sizes[path] = int(parts[3])
        self._texts: dict[str, str | None] = {}
        self._lock = threading.Lock()  # generations of several instances share a snapshot

    @classmethod
    def of(cls, instance: TaskInstance, sources: dict[str, str], mirrors: str | None) -> RepoSnapshot:
        """The instance's repository (a --source path, a mirror, or a clone) at base_commit."""
        source = sources.get(instance.repo) or resolve_source(instance.repo, mirrors)
        checkout = resolve(source, rev=instance.base_commit, repo=instance.repo)
        if checkout.git_dir is None:
            raise BenchsmithError(f"{source} is not a git repository")
        return cls(checkout.git_dir, checkout.commit)

    @property
    def files(self) -> list[str]:
        """Every file path of the commit."""
        return sorted(self.sizes)

    def read(self, path: str) -> str | None:
        """The text of `path` (None: no such file, binary, or too large)."""
        return self.read_many([path]).get(path)

    def read_many(self, paths: list[str]) -> dict[str, str]:
        """The texts of those `paths` that are text files of a usable size."""
        with self._lock:
            self._read_missing(paths)
        return {p: t for p in paths if (t := self._texts.get(p)) is not None}

    def _read_missing(self, paths: list[str]) -> None:
        wanted = [p for p in paths if p not in self._texts]
        for path in wanted:
            self._texts[path] = None
        wanted = [p for p in wanted if 0 < self.sizes.get(p, 0) <= MAX_FILE_BYTES]
        if wanted:
            request = "".join(f"{self.commit}:{p}\n" for p in wanted).encode()
            proc = subprocess.run([git_binary(), "cat-file", "--batch"], cwd=self.git_dir,
                                  input=request, capture_output=True, timeout=600, check=False)
            if proc.returncode != 0:
                raise BenchsmithError(f"git cat-file failed in {self.git_dir}")
            data, offset = proc.stdout, 0
            for path in wanted:
                end = data.index(b"\n", offset)
                header = data[offset:end].split()
                offset = end + 1
                if len(header) != 3:
                    continue  # "missing"
                size = int(header[2])
                blob = data[offset:offset + size]
                offset += size + 1
                if b"\0" not in blob:
                    self._texts[path] = blob.decode("utf-8", errors="replace")
