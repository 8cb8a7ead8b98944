"""Page scripts of the review app (Streamlit calls only); run through st.navigation in app.py."""
