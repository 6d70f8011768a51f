"""The REST API (Django REST framework): participants upload runs, organisers pool them and download qrels.

Views are thin: a serializer validates the request, one service does the work
(annotation.services.submissions, annotation.services.campaigns, assessments.exporters), and the
view maps the service's domain errors to HTTP statuses. URLs are in config/api_urls.py.
"""
