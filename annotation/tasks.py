"""Celery tasks of the organiser's console. They take ids, re-read state and can run twice without harm.

run_data_import is defined beside the import it runs and the service that queues it
(annotation.services.data_imports), under this module's task name; it is named here for the workers.
"""

from annotation.services.data_imports import run_data_import

__all__ = ["run_data_import"]
