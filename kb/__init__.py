"""kb: a literature-grounded knowledge base for protein-language-model research."""

# The one place the version is written (pyproject.toml reads it). Evidence records the version it was made
# with and becomes stale when it changes, so bump it only for changes that can change a result or a verdict
# (see CONTRIBUTING.md), and say why in CHANGELOG.md.
__version__ = "0.4.0"
