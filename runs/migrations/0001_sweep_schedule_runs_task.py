"""The sweeper's schedule now calls runs.tasks.sweep.

The stale-run step moved from memory to the run engine (runs → memory → agents), so
the scheduled entry point is the runs app's task, which runs that step and then the
memory steps. State only: no table changes.
"""

from django.db import migrations

SWEEP = "memory-sweep"


def to_runs(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name=SWEEP).update(func="runs.tasks.sweep")


def to_memory(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name=SWEEP).update(func="memory.tasks.sweep")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0002_schedule_memory_sweep"),
    ]

    operations = [migrations.RunPython(to_runs, to_memory)]
