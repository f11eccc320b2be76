#if canImport(Glibc)
import Glibc
#endif

/// Whether this test process runs under ThreadSanitizer (`swift test --sanitize=thread`), which
/// makes every step several times slower.
///
/// Why a test asks: a few tests measure a fleet-wide property under load whose outcome depends
/// on work finishing within the product's own bounded waits (a host waits 10 s for another
/// host's claimed fetch). Under the sanitizer the same work takes 5–10 × as long, so such a test
/// runs a smaller load there, keeping what it asserts. Found by looking up the sanitizer
/// runtime's entry point in the running process.
public let threadSanitizerIsActive: Bool = {
    guard let process = dlopen(nil, RTLD_NOW) else { return false }
    defer { dlclose(process) }
    return dlsym(process, "__tsan_init") != nil
}()
