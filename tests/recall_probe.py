"""Another process's recall index, for the tests that check "gone in every process".

    python -m tests.recall_probe

Reads one JSON request per line on stdin — ``{"tenant": 1, "agent": 1, "owner": 2, "q":
"…", "terms": ["…"]}`` — and answers one JSON line: the run ids recall search returns,
the run ids this process's index of the scope holds, and the document frequency of
each of ``terms`` in it. The process keeps its index between requests, exactly as a web
or worker process does, so a test can build it, change the database from the test
process, and ask again. Runs on config.settings with the test database (DATABASE_URL).
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from memory.scope import Scope
    from memory.services.recall import _INDEXES, RecallQuery, recall_search

    for line in sys.stdin:
        request = json.loads(line)
        scope = Scope(request["tenant"], request["agent"], request["owner"])
        hits = recall_search(scope=scope, query=RecallQuery(message=request["q"]))
        index = _INDEXES.get(scope).index
        answer = {
            "hits": [hit.run_id for hit in hits],
            "index": sorted(index.doc_ids),
            "df": {term: index.document_frequency(term) for term in request.get("terms", [])},
        }
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
