# Chinese verbose names for every field of ours (issue #18): no schema change.

import django.db.models.deletion
from decimal import Decimal
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0004_preference'),
        ('memory', '0004_recall_terms_v2'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='agent',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='创建时间'),
        ),
        migrations.AlterField(
            model_name='agent',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='agents', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='加入时间'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL, verbose_name='用户'),
        ),
        migrations.AlterField(
            model_name='provider',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='创建时间'),
        ),
        migrations.AlterField(
            model_name='run',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='run',
            name='cost',
            field=models.DecimalField(decimal_places=6, default=Decimal('0'), max_digits=14, verbose_name='成本'),
        ),
        migrations.AlterField(
            model_name='run',
            name='input_tokens',
            field=models.PositiveIntegerField(default=0, verbose_name='输入 token'),
        ),
        migrations.AlterField(
            model_name='run',
            name='memory_enqueued_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='记忆任务入队时间'),
        ),
        migrations.AlterField(
            model_name='run',
            name='output_tokens',
            field=models.PositiveIntegerField(default=0, verbose_name='输出 token'),
        ),
        migrations.AlterField(
            model_name='run',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='run',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='run',
            name='thread',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='memory.thread', verbose_name='会话'),
        ),
    ]
