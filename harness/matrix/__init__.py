"""`memconform matrix`: many implementations side by side (registry, plan, run, combine, classify, render)."""
