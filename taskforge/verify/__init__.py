"""Verification: prove with the tests that a task is real."""

from taskforge.verify.protocol import (
    Labels,
    audit_labels,
    check_labels,
    collected_ids,
    collection_breaks,
    label_tests,
)

__all__ = [
    "Labels",
    "audit_labels",
    "check_labels",
    "collected_ids",
    "collection_breaks",
    "label_tests",
]
