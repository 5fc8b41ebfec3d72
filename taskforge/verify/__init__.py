"""Verification: prove with the tests that a task is real."""

from taskforge.verify.protocol import Labels, check_labels, label_tests

__all__ = ["Labels", "check_labels", "label_tests"]
