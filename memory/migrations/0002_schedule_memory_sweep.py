"""Schedule the memory sweeper in django-q2 (restart recovery; DESIGN.md "Write path")."""

from django.db import migrations

SWEEP = "memory-sweep"


def add_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name=SWEEP,
        defaults={
            "func": "memory.tasks.sweep",
            "schedule_type": "I",  # every `minutes`
            "minutes": 5,
            "repeats": -1,
        },
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SWEEP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0001_initial"),
        ("agents", "0002_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(add_schedule, remove_schedule)]
