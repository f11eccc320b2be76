#if canImport(Glibc)
import Glibc
#endif

/// How a target reports a wrong answer: the message on stderr, then `abort()`, which libFuzzer
/// treats as a crash, so the input is kept (`crash-…`) and the run fails.
enum FuzzCheck {
    /// Stops the run with `message`.
    static func fail(_ message: @autoclosure () -> String) -> Never {
        printError("FUZZ CHECK FAILED: \(message())\n")
        abort()
    }

    /// Writes `text` to standard error (fd 2, unbuffered: it is there before the abort).
    static func printError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// Stops the run with `message` unless `condition` holds.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    /// The input as the daemon's text readers see bytes: invalid UTF-8 repaired, as
    /// `String(decoding:as:)` does for header values and provider ids.
    static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Runs an async body to completion from libFuzzer's synchronous callback.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphoreLike()
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// Holds what a task produced for the thread waiting on it (written before the signal, read after).
final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

/// A one-shot semaphore over a pthread mutex and condition (no Foundation in the hot path).
final class DispatchSemaphoreLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var signalled = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func signal() {
        pthread_mutex_lock(&mutex)
        signalled = true
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func wait() {
        pthread_mutex_lock(&mutex)
        while !signalled { pthread_cond_wait(&condition, &mutex) }
        pthread_mutex_unlock(&mutex)
    }
}
