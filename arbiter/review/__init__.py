"""The SME review app's logic, kept free of Streamlit so it is tested as plain code (docs/design.md §8.3).

The Streamlit pages in review_app/ only call into these modules and draw what they return.
"""
