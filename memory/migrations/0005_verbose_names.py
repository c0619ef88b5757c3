# Chinese verbose names for every field of ours (issue #18): no schema change.

import django.db.models.deletion
import django.utils.timezone
import memory.models
from decimal import Decimal
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0002_initial'),
        ('memory', '0004_recall_terms_v2'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='recallscope',
            options={'verbose_name': '情景记忆范围', 'verbose_name_plural': '情景记忆范围'},
        ),
        migrations.AlterField(
            model_name='corecandidate',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='core_candidates', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='corecandidate',
            name='fact_key',
            field=models.CharField(editable=False, max_length=300, verbose_name='归一化文本'),
        ),
        migrations.AlterField(
            model_name='corecandidate',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='core_candidates', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='corecandidate',
            name='source_run',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='core_candidates', to='agents.run', verbose_name='来源运行'),
        ),
        migrations.AlterField(
            model_name='corecandidate',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='core_facts', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='confirmed_by',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='确认人'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='core_facts', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='source_run',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='agents.run', verbose_name='来源运行'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='corefact',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='更新时间'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_ops', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='cost',
            field=models.DecimalField(decimal_places=6, default=Decimal('0'), max_digits=14, verbose_name='成本'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='created_at',
            field=models.DateTimeField(default=django.utils.timezone.now, verbose_name='时间'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='error_code',
            field=models.CharField(blank=True, max_length=64, verbose_name='错误代码'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='input_tokens',
            field=models.PositiveIntegerField(default=0, verbose_name='输入 token'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='output_tokens',
            field=models.PositiveIntegerField(default=0, verbose_name='输出 token'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='provider',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='agents.provider', verbose_name='模型供应方'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='run',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='memory_ops', to='agents.run', verbose_name='运行'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='success',
            field=models.BooleanField(default=True, verbose_name='成功'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='memoryop',
            name='thread',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='memory_ops', to='memory.thread', verbose_name='会话'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='run',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='recall_entry', to='agents.run', verbose_name='运行'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='terms',
            field=models.TextField(editable=False, verbose_name='检索词'),
        ),
        migrations.AlterField(
            model_name='recallentry',
            name='thread',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.thread', verbose_name='会话'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='entry_count',
            field=models.PositiveIntegerField(default=0, verbose_name='条目数'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='max_entry_id',
            field=models.BigIntegerField(default=0, verbose_name='最大条目编号'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='recallscope',
            name='version',
            field=models.PositiveBigIntegerField(default=0, verbose_name='版本'),
        ),
        migrations.AlterField(
            model_name='redlineaudit',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='redlineaudit',
            name='owner',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='redlineaudit',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='agents.tenant', verbose_name='租户'),
        ),
        migrations.AlterField(
            model_name='runcontext',
            name='created_at',
            field=models.DateTimeField(default=django.utils.timezone.now, verbose_name='创建时间'),
        ),
        migrations.AlterField(
            model_name='runcontext',
            name='injected_text',
            field=models.TextField(blank=True, verbose_name='注入的记忆'),
        ),
        migrations.AlterField(
            model_name='runcontext',
            name='manifest',
            field=models.JSONField(default=dict, verbose_name='来源清单'),
        ),
        migrations.AlterField(
            model_name='runcontext',
            name='messages',
            field=models.JSONField(default=list, verbose_name='发送的消息'),
        ),
        migrations.AlterField(
            model_name='runcontext',
            name='run',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='context_record', serialize=False, to='agents.run', verbose_name='运行'),
        ),
        migrations.AlterField(
            model_name='thread',
            name='agent',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='threads', to='agents.agent', verbose_name='智能体'),
        ),
        migrations.AlterField(
            model_name='thread',
            name='compress_enqueued_at',
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name='补做压缩入队时间'),
        ),
        migrations.AlterField(
            model_name='thread',
            name='id',
            field=models.CharField(default=memory.models.new_thread_id, editable=False, max_length=32, primary_key=True, serialize=False, verbose_name='编号'),
        ),
        migrations.AlterField(
            model_name='thread',
            name='owner',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='threads', to=settings.AUTH_USER_MODEL, verbose_name='教师'),
        ),
        migrations.AlterField(
            model_name='thread',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='threads', to='agents.tenant', verbose_name='租户'),
        ),
    ]
