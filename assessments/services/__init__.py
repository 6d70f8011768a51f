"""Write operations on the test collection: plain functions that own their transaction."""
