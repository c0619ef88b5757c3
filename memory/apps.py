from django.apps import AppConfig
from django.db.models.signals import post_delete
from django.utils.translation import gettext_lazy as _


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = _("记忆")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Models are loaded only now: the receivers' module imports them (and services).
        from memory import signals

        post_delete.connect(
            signals.recall_entry_post_delete,
            sender="memory.RecallEntry",
            dispatch_uid="memory.recall_entry_removed",
        )
