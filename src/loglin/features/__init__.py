"""Predicate extraction for Maxent POS tagging and chunking (Ratnaparkhi 1996; OpenNLP defaults)."""
from .extract import FeatureExtractor, Tokens, Vocabulary, spelling
from .templates import Atom, Template, chunk_templates, pos_templates

__all__ = ["FeatureExtractor", "Tokens", "Vocabulary", "spelling", "Atom", "Template",
           "pos_templates", "chunk_templates"]
