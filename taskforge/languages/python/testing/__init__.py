"""Running tests: pytest with JUnit XML, per-test coverage, and the baseline built from both."""
