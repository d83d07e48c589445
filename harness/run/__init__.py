"""One run, from opening the target to the report in its folder: the session, the report folder, validation of a document, expectations, replay, coverage."""
