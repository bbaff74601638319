"""``nbdl.kvstore`` (also ``nbdl.kv``): MXNet 1.x's key-value store for one
process, ``create('local')`` / ``create('device')``.  See ``kvstore`` for
the semantics; the distributed types (``dist_sync``, ``dist_device_sync``,
``dist_async``, ``horovod``) are ``kvstore.dist``'s, on MPI."""
from .compression import CompressionError, TwoBitCompression  # noqa: F401
from .kvstore import (DIST_TYPES, LOCAL_TYPES, KVStore, KVStoreBase, KVStoreError,  # noqa: F401
                      create, is_distributed_type)
from .teststore import TestStore  # noqa: F401  (registers 'teststore')

__all__ = ["KVStore", "KVStoreBase", "KVStoreError", "TestStore", "CompressionError", "TwoBitCompression",
           "LOCAL_TYPES", "DIST_TYPES", "create", "is_distributed_type"]
