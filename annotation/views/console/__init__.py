"""The organiser's console: run a campaign in the browser, from an empty site to qrels.

Thin views over the services the manage.py commands call (annotation.services.campaign_setup,
data_imports, pool_setup, people, tokens, assignment, workload; annotation.reports.results;
assessments.services.qrels and the exporters), so a page accepts and refuses exactly what a command
does. Every page is for organisers only (404 for everyone else, 302 to sign in when signed out).
"""
