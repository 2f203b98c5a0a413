"""Shared app state: one cached KnowledgeBase per settings, and session-state defaults."""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from kb.core import KnowledgeBase
from kb.settings import Settings

SESSION_DEFAULTS: dict[str, Any] = {"note_id": None}


@st.cache_resource(show_spinner=False)
def _kb_for(papers: str | None, home: str | None, db: str | None) -> KnowledgeBase:
    kb = KnowledgeBase(Settings())
    kb.index()
    return kb


def get_kb() -> KnowledgeBase:
    """The knowledge base named by KB_PAPERS / KB_HOME / KB_DATABASE_URL (cached per combination)."""
    return _kb_for(os.environ.get("KB_PAPERS"), os.environ.get("KB_HOME"), os.environ.get("KB_DATABASE_URL"))


def init_session() -> None:
    """Set every session-state key the pages rely on, once per session."""
    for key, value in SESSION_DEFAULTS.items():
        st.session_state.setdefault(key, value)
