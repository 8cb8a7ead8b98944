"""Verify: run the verifiers (`verifiers/`) on one document."""
