"""Results folders: written staged and atomically with every file hashed in the manifest
(:mod:`~harness.store.write`, :mod:`~harness.store.folder`), and read back with each file verified
(:mod:`~harness.store.read`)."""
