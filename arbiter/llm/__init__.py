"""The LLM port: one small interface for every model Arbiter talks to (docs/design.md §7.3)."""
