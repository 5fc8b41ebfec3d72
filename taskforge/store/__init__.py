"""The output directory: shards, journal, manifest and the snapshots tasks need."""
