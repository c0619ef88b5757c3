"""The run limits' buckets (agents/ratelimits.py) replace the database cache table that
DRF's sliding-window throttles kept their request histories in (0007): its rows are of no
use to the buckets, and nothing reads it any more."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0007_limits_cache_table'),
    ]

    operations = [
        migrations.CreateModel(
            name='RateBucket',
            fields=[
                ('key', models.CharField(max_length=200, primary_key=True, serialize=False, verbose_name='键')),
                ('tat', models.FloatField(verbose_name='理论到达时间')),
                ('step', models.FloatField(verbose_name='间隔')),
                ('bound', models.FloatField(verbose_name='放行界限')),
                ('admitted', models.BooleanField(verbose_name='已放行')),
            ],
            options={
                'verbose_name': '限流计数',
                'verbose_name_plural': '限流计数',
                'db_table': 'agents_rate_bucket',
            },
        ),
        migrations.RunSQL("DROP TABLE IF EXISTS agent_memory_limits", migrations.RunSQL.noop),
    ]
