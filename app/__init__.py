"""Streamlit app over kb.core."""
