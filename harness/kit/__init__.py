"""What suites borrow: domain tables and values, batch failures, large exports, the hostile battery, the date-time and credential rules, loopback serving, the fixtures loader."""
