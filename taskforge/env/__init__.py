"""Per-snapshot environments: detect what the tests need, build a venv with uv, cache it."""

from taskforge.env.build import build_environment, environment_key
from taskforge.env.detect import detect_spec

__all__ = ["build_environment", "detect_spec", "environment_key"]
