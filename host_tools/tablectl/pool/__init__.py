"""The linked progressive: one common jackpot that many tables feed (rulebook 000 rule 3.1), kept in
PostgreSQL (docs/POOL.md). engine: the rules; store: the books; server: `tablectl pool serve`;
client: a table's link to its pool (`tablectl serve --pool`). The throwaway server and
the floor of virtual tables used by tests and benchmarks are tabledev.pgserver and tabledev.floor."""
