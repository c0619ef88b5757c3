from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OpsConfig(AppConfig):
    """Operating the server: ``manage.py doctor``. No models."""

    name = "ops"
    verbose_name = _("运维")
