"""L4 knowledge base, the pure parts: file parsing and CJK-aware chunking (Django-free).

:mod:`memory.kb.parse` turns an uploaded file into blocks (headings and paragraphs);
:mod:`memory.kb.chunking` cuts blocks into passages of a few hundred tokens that keep
their heading path. The Django side (documents, the worker, search, injection) is
``memory.services.kb``.
"""
