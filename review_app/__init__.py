"""The Streamlit review app (docs/design.md §8.3): `arbiter review` calls launch(); app.py is the entry script."""

from arbiter.review_app.launch import launch, streamlit_command

__all__ = ["launch", "streamlit_command"]
