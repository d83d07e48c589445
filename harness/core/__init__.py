"""The pure core: checks, outcomes, runner, reports. Imports no pytest, CLI or transport."""
