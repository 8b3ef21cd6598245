"""Runs inside the sandbox, with the instance's Python and coverage.py (5.0 or newer; the
Python may be as old as 2.7, so no annotations or f-strings here):

    python covreport.py OUT.json RUN.rc [RUN.rc ...]

writes {run name: {"files": {path: {"executed_lines", "missing_lines", "contexts"}}}}: the part
of ``coverage json --show-contexts`` change coverage reads. coverage 7's JSON report repeats a
file's whole per-line context table for every function and class in it, hundreds of megabytes
and tens of seconds for a large module run by many tests; this takes well under a second.
"""

import json
import os
import sys


def report(rc):
    import coverage

    cov = coverage.Coverage(config_file=rc)
    cov.load()
    data = cov.get_data()
    files = {}
    for path in sorted(data.measured_files()):
        try:
            try:  # executed lines as the JSON report gives them (mapped to their statements)
                analysis = cov._analyze(path)
                executed, missing = analysis.executed, analysis.missing
            except AttributeError:
                _, statements, _, missing, _ = cov.analysis2(path)
                executed = set(statements) - set(missing)
        except Exception:  # a source that is gone or does not parse: left out, as `-i` would
            continue
        contexts = data.contexts_by_lineno(path)
        name = os.path.relpath(path) if os.path.isabs(path) else path
        files[name.replace(os.sep, "/")] = {
            "executed_lines": sorted(executed),
            "missing_lines": sorted(missing),
            "contexts": dict((str(line), sorted(names)) for line, names in contexts.items()),
        }
    return {"files": files}


def main(argv):
    runs = dict((os.path.basename(rc)[: -len(".rc")], report(rc)) for rc in argv[1:])
    with open(argv[0], "w") as handle:
        json.dump(runs, handle)


if __name__ == "__main__":
    main(sys.argv[1:])
