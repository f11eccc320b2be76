// swiftc -O Benchmarks/scripts/base64_encode_cost.swift -o /tmp/base64-cost && /tmp/base64-cost
import Foundation
#if canImport(Glibc)
import Glibc
#endif
// CPU cost (this thread's CPU time, so a loaded machine does not inflate it) of encoding a
// 20 KiB thumbnail's bytes as base64 at answer time: Foundation's base64EncodedString, -O.
func cpuNanoseconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e9 + Double(t.tv_nsec)
}
let bytes = Data((0..<20_480).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) })
var sink = 0
for _ in 0..<200 { sink &+= bytes.base64EncodedString().utf8.count }  // warm-up
for _ in 0..<5 {
    let n = 2000
    let start = cpuNanoseconds()
    for _ in 0..<n { sink &+= bytes.base64EncodedString().utf8.count }
    print(String(format: "base64EncodedString of 20 KiB: %.1f µs CPU per encode", (cpuNanoseconds() - start) / Double(n) / 1000))
}
print(sink > 0 ? "" : "x")
