"""Importers of external file formats: parse and check the whole input, then write it in one transaction."""
