"""The Docker backend: containers, base and environment images, the environment store.

Importing this package does not import the Docker SDK; the submodules that need it import it
when they first talk to the engine.
"""

from benchsmith.sandbox.docker.config import DockerSandboxConfig

__all__ = ["DockerSandboxConfig"]
