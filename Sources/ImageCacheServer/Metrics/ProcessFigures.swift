import Foundation

/// The process's resident memory and open descriptors, read from `/proc` at scrape time.
///
/// Cheap by design: `/proc/self/statm` is one short read, and counting `/proc/self/fd` lists
/// one folder (no `stat` per entry). Read only when a scraper asks, never on a timer. nil
/// where `/proc` does not answer (not Linux, or mounted without it).
struct ProcessFigures: Sendable, Equatable {
    /// Resident set size in bytes (`statm`'s second field times the page size).
    var residentBytes: Int?
    /// Open file descriptors (entries of `/proc/self/fd`, less the one the listing itself holds).
    var openDescriptors: Int?

    /// The figures now.
    static func read() -> ProcessFigures {
        ProcessFigures(residentBytes: residentBytes(statm: try? String(contentsOfFile: "/proc/self/statm", encoding: .ascii),
                                                    pageSize: Int(sysconf(Int32(_SC_PAGESIZE)))),
                       openDescriptors: openDescriptors())
    }

    /// Resident bytes from the text of `/proc/<pid>/statm` ("size resident shared …", in pages):
    /// nil when the text is not that, or the product would overflow.
    static func residentBytes(statm: String?, pageSize: Int) -> Int? {
        guard let statm, pageSize > 0 else { return nil }
        let fields = statm.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let pages = Int(fields[1].trimmingCharacters(in: .whitespacesAndNewlines)), pages >= 0 else {
            return nil
        }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: pageSize)
        return overflow ? nil : bytes
    }

    /// The number of open descriptors, not counting the one `opendir` holds while listing.
    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in raw.first }
            if name == UInt8(ascii: ".") { continue }  // "." and ".."; descriptor names are digits
            count += 1
        }
        return max(0, count - 1)
    }
}
