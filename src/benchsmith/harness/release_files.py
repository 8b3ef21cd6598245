"""Files a build step would generate or download, taken from the project's published source
archive instead: the command that adds them to a checkout inside the sandbox.

Only files the checkout lacks *and* git ignores are added (generated sources, downloaded
assets), so nothing tracked is overwritten and no module deleted since the release comes back;
and a licence text at the root the checkout lacks, which some build hooks download (no code).
"""

from __future__ import annotations

import shlex

# Runs with the sandbox's Python (3.6 or newer) in the repository's directory; argv[1] is the
# archive's URL. Without git, files with Python code are left out instead.
_SCRIPT = r"""
import io, os, subprocess, sys, tarfile, urllib.request, zipfile
url = sys.argv[1]
data = urllib.request.urlopen(url, timeout=300).read()
if url.endswith(".zip"):
    archive = zipfile.ZipFile(io.BytesIO(data))
    members = [(m.filename, m) for m in archive.infolist() if not m.is_dir()]
    read = archive.read
else:
    archive = tarfile.open(fileobj=io.BytesIO(data))
    members = [(m.name, m) for m in archive.getmembers() if m.isfile()]
    read = lambda m: archive.extractfile(m).read()
wanted = {}
for name, member in members:
    rel = name.split("/", 1)[1] if "/" in name else ""
    parts = rel.split("/")
    if not rel or ".." in parts or parts[0] in (".git", "PKG-INFO") or rel.endswith(".egg-info") \
            or any(p.endswith(".egg-info") for p in parts) or os.path.lexists(rel):
        continue
    wanted[rel] = member
try:
    listed = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], input="\n".join(wanted),
                            stdout=subprocess.PIPE, universal_newlines=True).stdout.split("\n")
    keep = [p for p in listed if p in wanted]
except OSError:
    keep = [p for p in wanted if not p.endswith((".py", ".pyi", ".pyx", ".pxd"))]
# a licence text the build writes from a download (coherent.licensed) is no code, tracked or not
keep += [p for p in wanted if p not in keep and "/" not in p
         and p.upper().startswith(("LICENSE", "LICENCE", "COPYING", "NOTICE"))]
for rel in keep:
    if os.path.dirname(rel):
        os.makedirs(os.path.dirname(rel), exist_ok=True)
    with open(rel, "wb") as out:
        out.write(read(wanted[rel]))
print("from the release archive: %d generated files the checkout lacked" % len(keep))
"""


def release_files_command(url: str) -> str:
    """The shell command that adds a source archive's generated files to the checkout."""
    return f"python -c {shlex.quote(_SCRIPT.strip())} {shlex.quote(url)}"
