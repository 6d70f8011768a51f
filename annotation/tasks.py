"""Celery tasks of the organiser's console. They take ids, re-read state and can run twice without harm."""

from celery import shared_task

from annotation.services import data_imports
from retrieval.services import TRANSIENT_ERRORS

MAX_RETRIES = 5


@shared_task(bind=True, acks_late=True, name="annotation.tasks.run_data_import")
def run_data_import(self, import_id: int) -> dict:
    """Import the files of a DataImport (claimed first: a second delivery does nothing while one runs).

    A bad file is not an error here: its problems are stored on the import. A transient database error
    puts the import back in the queue and retries with backoff.
    """
    delivery = getattr(self.request, "delivery_info", None) or {}
    try:
        done = data_imports.run_import(import_id, redelivered=bool(delivery.get("redelivered")))
    except TRANSIENT_ERRORS as exc:
        if self.request.is_eager or self.request.retries >= MAX_RETRIES:
            data_imports.give_up(import_id, f"gave up after a database error: {exc}")
            raise
        raise self.retry(exc=exc, countdown=min(60, 2**self.request.retries), max_retries=MAX_RETRIES) from exc
    if done is None:
        return {"import": import_id, "status": "taken by another worker"}
    return {"import": import_id, "status": done.status}
