"""Comparison reports: the content as plain data (no Qt) and its PDF rendering."""
