"""invarax's benchmarks: each module compares invarax with a reference in the same run."""
