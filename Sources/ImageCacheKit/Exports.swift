// The engine's types speak the support target's vocabulary (`LockedState`, `Observed`, the
// concurrency primitives): whoever embeds the engine gets it without a second import.
@_exported import ImageCacheSupport
