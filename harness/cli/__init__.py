"""The front doors: the `memconform` command and the pytest plugin, thin over run/ and the features."""
