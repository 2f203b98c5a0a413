"""kb: a literature-grounded knowledge base for protein-language-model research."""

__version__ = "0.1.0"
