"""Arbiter: verify a machine's classification of a medical-records PDF, auto-fix it, or escalate it."""

__version__ = "0.1.0"
