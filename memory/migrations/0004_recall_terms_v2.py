"""Re-tokenise the stored terms of recall entries with the current tokenizer (gate v2).

Entries keep their terms so that a process can index them without tokenising; the terms
now start with a version marker and include word-aware Chinese terms and Snowball
stems. Entries left unconverted would still be re-tokenised at load time
(``memory.services.recall._entry_terms``); this migration does it once. It uses the live
tokenizer on purpose: the terms must be what the running code produces.
"""

from django.db import migrations

BATCH = 2000


def retokenise(apps, schema_editor):
    from memory.services.recall import TERMS_MARK, stored_terms

    RecallEntry = apps.get_model("memory", "RecallEntry")
    pending = RecallEntry.objects.exclude(terms__startswith=f"{TERMS_MARK} ").exclude(
        terms=TERMS_MARK
    )
    last = 0
    while True:
        batch = list(pending.filter(pk__gt=last).order_by("pk")[:BATCH])
        if not batch:
            break
        for entry in batch:
            entry.terms = stored_terms(entry.text)
        RecallEntry.objects.bulk_update(batch, ["terms"])
        last = batch[-1].pk


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_memoryop_redline_judge")]

    operations = [migrations.RunPython(retokenise, migrations.RunPython.noop, elidable=True)]
