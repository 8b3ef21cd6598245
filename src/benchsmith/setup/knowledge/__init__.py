"""Knowledge tables the repair rules consult: import names, pytest plugins, build tools, tox envs.

Every value is a PyPI distribution name unless a table says otherwise. The tables only
hold cases where guessing from the error text would go wrong; lookups fall back sensibly.
One module per table family; the import-name table is data (``imports.toml``).
"""

from benchsmith.setup.knowledge.build_tools import BUILD_TOOLS, PEP660_DATES
from benchsmith.setup.knowledge.imports import IMPORT_TO_DISTRIBUTION, distribution_for_import
from benchsmith.setup.knowledge.pytest_plugins import (
    ASYNC_TEST_PLUGIN,
    PYTEST_FIXTURE_PLUGINS,
    PYTEST_INI_KEY_PLUGINS,
    PYTEST_MARKER_PLUGINS,
    PYTEST_OPTION_PLUGINS,
    PYTEST_PLUGIN_MODULES,
    plugin_for_module,
    plugin_for_option,
)
from benchsmith.setup.knowledge.stdlib import STDLIB_REMOVED, stdlib_removal
from benchsmith.setup.knowledge.tox import python_from_tox_env

__all__ = [
    "ASYNC_TEST_PLUGIN",
    "BUILD_TOOLS",
    "IMPORT_TO_DISTRIBUTION",
    "PEP660_DATES",
    "PYTEST_FIXTURE_PLUGINS",
    "PYTEST_INI_KEY_PLUGINS",
    "PYTEST_MARKER_PLUGINS",
    "PYTEST_OPTION_PLUGINS",
    "PYTEST_PLUGIN_MODULES",
    "STDLIB_REMOVED",
    "distribution_for_import",
    "plugin_for_module",
    "plugin_for_option",
    "python_from_tox_env",
    "stdlib_removal",
]
