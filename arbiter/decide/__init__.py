"""Decide: the policy (V5), auto-fixes and the retry loop that re-verifies them."""
