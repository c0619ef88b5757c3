# A user's own settings: the interface language (issue #18).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0003_tool_calls'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Preference',
            fields=[
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='preference', serialize=False, to=settings.AUTH_USER_MODEL, verbose_name='用户')),
                ('language', models.CharField(blank=True, choices=[('zh-hans', '简体中文'), ('en', 'English')], help_text='留空则跟随浏览器的语言设置。', max_length=16, verbose_name='界面语言')),
                ('updated_at', models.DateTimeField(auto_now=True, verbose_name='更新时间')),
            ],
            options={
                'verbose_name': '用户偏好',
                'verbose_name_plural': '用户偏好',
            },
        ),
    ]
