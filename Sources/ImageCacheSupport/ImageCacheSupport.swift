// ImageCacheSupport: the concurrency vocabulary every other target shares, the one way to
// start a child process (`ChildSpawn`) and the demo simulator's one-line handshake, and nothing
// else (no C library, no SwiftNIO), so that the provider simulator and the command line can use
// it without linking the engine.
//
// # Which layer uses locks, actors or the event loop
//
// One rule, by who touches the state:
//
// - **The event loop** owns what only the socket touches: a connection's framing, its outbound
//   queue and the order of its lines (ImageCacheServer's Framing/ and Transport/). Such state
//   is read and written on the channel's loop only and needs no lock.
// - **A lock** (`LockedState`, one per type, documented beside it) guards state that threads
//   outside Swift concurrency reach synchronously: the curl thread, the event loops, the
//   pipeline's decode queue. That is the engine's hot paths (transfers, fetches, the memory
//   tier, the decode budget) and the per-session tables the event loop consults while it
//   answers (sessions, slots, prefetches). A lock is held for a few lines: no `await`, no call
//   that may take it again, and continuations and task cancellations run after it is
//   released. The primitives below are written this way and are what such types build on:
//   `SharedOutcome` (a result reached once, with cancellable waiters), `DemandGroup` (demands
//   with priorities; the last one out cancels the work), `TaskTable` (keyed tasks a type owns)
//   and `Observed` (a value a test or a caller awaits a condition on).
// - **An actor** owns state that only async code touches, where each use may itself suspend
//   (a provider client and its rate limiter, the search coordinator, the download manager).
//   An actor is never called from the curl thread or an event loop, and nothing blocks on it.
//
// Atomics are kept for counters read without any ordering (metrics), never to guard other
// state.
