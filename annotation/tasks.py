"""Celery tasks of the organiser's console. They take ids, re-read state and can run twice without harm."""

from celery import shared_task

from annotation.services.data_imports import give_up, run_import
from retrieval.services.background import retrying


@shared_task(bind=True, acks_late=True, name="annotation.tasks.run_data_import")
def run_data_import(self, import_id: int) -> dict:
    """Import the files of a DataImport (claimed first: a second delivery does nothing while one runs).

    A bad file is not an error here: its problems are stored on the import. A transient database error puts the
    import back in the queue and is retried with backoff (background.retrying); at the last, the import fails and
    says why.
    """
    delivery = getattr(self.request, "delivery_info", None) or {}

    def work():
        done = run_import(import_id, redelivered=bool(delivery.get("redelivered")))
        if done is None:
            return {"import": import_id, "status": "taken by another worker"}
        return {"import": import_id, "status": done.status}

    def gave_up(exc):
        give_up(import_id, f"gave up after a database error: {exc}")
        return {"import": import_id, "status": "failed"}

    return retrying(self, work, gave_up)
