"""Verification, the one home of proving with the tests that a task is real:

- `protocol`: the fail-before / pass-after labels on a materialized workspace;
- `gates`: trivial solutions, collection breaks, the leak scan;
- `confirm`: one candidate, after the language's fast path, to a verified record (`generate`);
- `reverify`: every gate again on an emitted record, from scratch (`taskforge verify`).
"""
