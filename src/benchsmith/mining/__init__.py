"""Task mining: from repositories to validated, SWE-bench-compatible task instances."""
