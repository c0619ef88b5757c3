"""The database cache table behind the throttles (settings.CACHES["limits"]).

Django creates cache tables with ``createcachetable``, not with migrations; running it
here means every ``migrate`` (make run, make serve, a fresh install, the test database)
has the table, so the limits never depend on a step an operator could forget. It is
idempotent and does nothing when LIMITS_CACHE_URL points the limits at Redis.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("agents", "0006_governance_run_erasure")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
