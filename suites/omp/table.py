"""OMP's one table of readings: the rows of readings.py (the fuzzer's, the sweeps' and the large-export
points, met by requests as sent) and of example_readings.py (the points the example checks and the model meet,
in the forms they meet them). Every check asks this table; readings.py's own rows are the model's (it reads
O13 and O34 from them without the example rows, which ask the model in turn)."""

from __future__ import annotations

from memconform.core.readings import ReadingTable
from memconform.suites.omp.example_readings import ROWS
from memconform.suites.omp.readings import BASE_TABLE

TABLE = ReadingTable([*BASE_TABLE, *ROWS])
# the names a row's checks give to what several checks share (docs/open-points.md says what each stands for)
STANDS_FOR = {
    "model": "every check that asks the OMP model (suites/omp/model/: domain_search_parameters, domain_list_parameters, "
             "model_based_sequences and the example checks through suites/omp/ask.py)",
    "listing_dataset": "the listing checks' seeding (suites/omp/checks/listing.py)",
}
