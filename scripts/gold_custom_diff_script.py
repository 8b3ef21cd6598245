"""Write a scripted model that answers each instance's gold test patch in SWT-bench's custom
diff format (the lossless-plumbing check of `generate` + `evaluate --mode test`).

    python scripts/gold_custom_diff_script.py INSTANCES.jsonl MIRRORS gold.json
    benchsmith generate --instances INSTANCES.jsonl --mirrors MIRRORS --model scripted:gold.json \
        --method zeroshot-plus --mode test --out gold-preds.jsonl
    benchsmith evaluate --instances INSTANCES.jsonl --mirrors MIRRORS --mode test \
        --predictions gold-preds.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchsmith.generation import RepoSnapshot, as_custom_diff
from benchsmith.instance import TaskInstance


def main(instances: str, mirrors: str, out: str) -> None:
    rules = []
    for line in Path(instances).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        instance = TaskInstance.model_validate(json.loads(line))
        snapshot = RepoSnapshot.of(instance, {}, mirrors)
        blocks = as_custom_diff(instance.test_patch, snapshot.read)
        rules.append({"match": instance.problem_statement.strip(),
                      "reply": f"```custom-diff\n{blocks}```"})
    Path(out).write_text(json.dumps({"rules": rules}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
