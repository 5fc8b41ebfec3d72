"""Per-snapshot environments: detect what the tests need, build a venv with uv, cache it."""

from taskforge.languages.python.env.build import build_environment, environment_key
from taskforge.languages.python.env.detect import detect_spec

__all__ = ["build_environment", "detect_spec", "environment_key"]
