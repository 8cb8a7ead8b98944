"""The LLM port: one small interface for every model Arbiter talks to (DESIGN §7)."""
