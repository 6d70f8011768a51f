"""Campaigns, assignments and review live here (annotation issue); roles are groups (annotation.roles)."""
