"""Run: one document (`document`), many (`batch`), one CLI invocation (`job`), the run lock."""
