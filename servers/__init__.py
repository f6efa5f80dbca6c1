"""The Redis-compatible servers this project starts itself: the embedded Valkey that
``canasta serve`` runs when no ``REDIS_URL`` is given, and a local Redis Cluster for tests
and benchmarks. The service only talks to them through their URLs."""
