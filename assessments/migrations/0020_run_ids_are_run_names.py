"""Judgement.run_ids and JudgementChange.run_ids hold one thing: run NAMES (issue 40 item 4). Nugget and citation
support labels stored their answer's run primary key; each such key becomes that run's name (a key whose run is gone
stays as it was: nothing else is known of it)."""

from django.db import migrations, models

ANSWER_LAYERS = ("nugget_support", "citation_support")
HELP = "The names of the runs this key was judged under (an article's run, an answer's run)."


def keys_to_names(apps, schema_editor):
    Judgement = apps.get_model("assessments", "Judgement")
    JudgementChange = apps.get_model("assessments", "JudgementChange")
    Run = apps.get_model("assessments", "Run")
    names = dict(Run.objects.filter(answers__isnull=False).distinct().values_list("pk", "name"))  # answers' runs
    for model, layer in ((Judgement, "layer"), (JudgementChange, "judgement__layer")):
        rows = model.objects.filter(**{f"{layer}__in": ANSWER_LAYERS}).exclude(run_ids=[]).only("pk", "run_ids")
        changed = []
        for row in rows.iterator(chunk_size=2000):
            new = sorted({names.get(int(r), str(r)) if str(r).isdigit() else str(r) for r in row.run_ids})
            if new != row.run_ids:
                row.run_ids = new
                changed.append(row)
            if len(changed) >= 500:
                model.objects.bulk_update(changed, ["run_ids"])
                changed = []
        if changed:
            model.objects.bulk_update(changed, ["run_ids"])


class Migration(migrations.Migration):

    dependencies = [
        ("assessments", "0019_machine_source_imported"),
    ]

    operations = [
        migrations.AlterField(model_name="judgement", name="run_ids",
                              field=models.JSONField(blank=True, default=list, help_text=HELP)),
        migrations.AlterField(model_name="judgementchange", name="run_ids",
                              field=models.JSONField(blank=True, default=list, help_text=HELP)),
        migrations.RunPython(keys_to_names, migrations.RunPython.noop),
    ]
