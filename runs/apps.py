from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunsConfig(AppConfig):
    """The run engine: above ``memory`` and ``agents`` (runs → memory → agents)."""

    name = "runs"
    verbose_name = _("运行")
    default_auto_field = "django.db.models.BigAutoField"
