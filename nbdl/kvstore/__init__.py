"""``nbdl.kvstore`` (also ``nbdl.kv``): MXNet 1.x's key-value store for one
process, ``create('local')`` / ``create('device')``.  See ``kvstore`` for
the semantics; distributed types come with nbdl's MPI work."""
from .compression import CompressionError, TwoBitCompression  # noqa: F401
from .kvstore import LOCAL_TYPES, KVStore, KVStoreBase, KVStoreError, create  # noqa: F401
from .teststore import TestStore  # noqa: F401  (registers 'teststore')

__all__ = ["KVStore", "KVStoreBase", "KVStoreError", "TestStore", "CompressionError", "TwoBitCompression",
           "LOCAL_TYPES", "create"]
