// A client sees the same message and error types as the daemon, so the two cannot drift.
@_exported import ImageCacheProtocol
